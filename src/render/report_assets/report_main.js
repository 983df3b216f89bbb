// attntrace report, last part: the lesson's header and contents, then the
// whole page in order (header, model view, pipeline, attention sections, one
// section per step, claims). At the end body.dataset.rendered is "ok"; any
// error on the way is listed in body.dataset.errors (the report test reads both).
  // ---- the lesson's header and contents
  // A token list; past MAX_TOKENS shown, the middle elided until "show all".
  const MAX_TOKENS = 64;
  function tokenList(title, tokens) {
    const div = el("div", { class: "tokens" });
    const draw = (all) => {
      const idx = shown(tokens.length, MAX_TOKENS, all);
      div.replaceChildren(el("b", {}, title), ...idx.map((i) => (i < 0 ? el("span", { class: "gap" }, `… ${tokens.length - MAX_TOKENS} more …`)
                                                                    : tokenCell("span", {}, tokens[i]))));
      if (tokens.length > MAX_TOKENS)
        div.append(el("button", { type: "button", onclick: () => draw(!all) }, all ? "show fewer" : `show all ${tokens.length}`));
    };
    draw(false);
    return div;
  }

  // A config field's value in words: positions and scale objects as a reader says them.
  function configWords(key, v) {
    if (key === "scale" && typeof v === "boolean") return v ? "÷ √d_head" : "none";
    if (v === null || typeof v !== "object") return String(v);
    if (key === "positions" && typeof v.kind === "string") {
      const kind = VOCABULARY.positions[v.kind] || v.kind;  // its display name, from the config table (report_views.js)
      const more = [v.layout ? `${v.layout} layout` : null, v.base !== undefined ? `base ${v.base}` : null,
                    Array.isArray(v.slopes) ? `slopes ${v.slopes.join(", ")}` : null].filter(Boolean);
      return more.length ? `${kind} (${more.join(", ")})` : kind;
    }
    if (key === "scale") {
      if (v.divide_by === "sqrt_dk") return "÷ √d_head";
      if (v.divide_by !== undefined) return `÷ ${v.divide_by}`;
      if (v.multiply_by !== undefined) return `× ${v.multiply_by}`;
    }
    return Object.entries(v).map(([k, x]) => `${k} ${Array.isArray(x) ? x.join(", ") : typeof x === "object" ? JSON.stringify(x) : x}`).join(", ");
  }

  const MANY_STEPS = 24;  // a longer list of steps starts folded (the pipeline links to them too)
  function header(trace) {
    const l = trace.lesson, c = trace.config, src = l.source || {};
    const counts = {};
    for (const cl of trace.claims) counts[cl.verdict] = (counts[cl.verdict] || 0) + 1;
    const rounded = trace.steps.some((s) => s.rounded_to !== undefined);
    const h = el("header", { class: "lesson" }, el("h1", {}, l.title),
      el("p", { class: "muted" }, [src.document, src.title, src.section].filter(Boolean).join(" · ")),
      el("p", { class: "muted" }, trace.run && trace.run.from
        ? `lesson ${l.id} · ${trace.generator} · stages ${trace.run.from} → ${trace.run.to} · ` +
          (rounded ? "document arithmetic (the article's rounding)" : "exact arithmetic")
        : `${trace.generator} · ${trace.steps.length} steps, drawn from the trace alone`),
      trace.batch
        ? trace.batch.sequences.map((toks, b) => el("div", { class: "tokens" }, el("b", {}, `sequence b${b} `),
                                                   toks.map((t) => el("span", {}, t))))
        : tokenList("tokens ", trace.tokens));
    if (trace.query_tokens) h.append(tokenList("queries ", trace.query_tokens));
    // a decoder: the memory its cross-attention reads (the keys of its first cross-attention's weights)
    const cross = trace.steps.find((s) => s.name.endsWith("cross_attn.hook_pattern") && s.labels && s.labels.length === 3);
    if (cross && !trace.batch) h.append(tokenList("memory (what cross-attention reads) ", cross.labels[2]));
    if (l.description) h.append(el("p", { class: "description" }, withCode(l.description)));
    // a diff: the page's one scale, in swatches
    if (trace.diff)
      h.append(el("p", { class: "diff-legend" }, el("span", { class: "swatch diff-equal" }, "0"), " equal ",
        el("span", { class: "swatch diff-within" }, "≈"), " within tolerance ",
        el("span", { class: "swatch diff-beyond" }, "\u00a0"), ` beyond it: ${fmt(diffScale.lo)} (pale) to ${fmt(diffScale.hi)} (dark), ` +
        "the same scale in every step"));
    // a large trace: what the page keeps of it (report_page.hpp)
    if (trace.page && trace.page.kept) h.append(el("p", { class: "banner", id: "page-kept" }, withCode(trace.page.kept)));
    // the config without fields that mean nothing here: no d_ff without an FFN, K/V heads only when they differ;
    // each field a name over its value, wrapping to the width (every one shown at 500 px)
    const shownConfig = Object.entries(c).filter(([k, v]) => !(k === "d_ff" && v === 0) && !(k === "kv_heads" && v === c.heads));
    h.append(el("dl", { class: "config" }, shownConfig.map(([k, v]) =>
      el("div", { "data-key": k }, el("dt", {}, k), el("dd", { class: "mono" }, configWords(k, v))))));
    if (trace.claims.length) h.append(el("p", {}, `${trace.claims.length} claim${trace.claims.length === 1 ? "" : "s"}: `, Object.keys(MARK).filter((v) => counts[v]).map((v) =>
      el("span", { class: `v-${v}` }, `${MARK[v]} ${counts[v]} ${v}  `))));
    if (trace.warnings && trace.warnings.length) h.append(el("ul", { class: "warnings" }, trace.warnings.map((w) => el("li", {}, w))));
    h.append(el("nav", { class: "contents" }, el("p", { class: "overviews" }, trace.diff ? null : el("a", { href: "#pipeline" }, "Pipeline"),
      attentionPatterns(trace).length ? [" · ", el("a", { href: "#model-view" }, "Model view")] : null,
      trace.model ? [" · ", el("a", { href: "#next-token" }, "Next token")] : null,
      trace.patching && !trace.diff ? [" · ", el("a", { href: "#patching" }, "Activation patching")] : null,
      trace.interventions && !trace.diff ? [" · ", el("a", { href: "#interventions" }, "Interventions")] : null),
      el("b", {}, "Steps"), el("details", MANY_STEPS < trace.steps.length ? {} : { open: "" },
        el("summary", {}, `${trace.steps.length} steps`), el("ol", {},
      trace.steps.map((s) => el("li", {}, el("a", { href: `#step-${s.name}` }, s.name))),
      el("li", {}, el("a", { href: "#claims" }, "Claims"))))));
    const patterns = trace.diff ? [] : trace.steps.filter((s) => s.name.endsWith("hook_pattern") && s.shape.length === 3 + (trace.batch ? 1 : 0));
    if (patterns.length) h.querySelector("nav b").after(" · Attention: ",
      ...patterns.flatMap((s, k) => [k ? " · " : "", el("a", { href: `#${attentionId(s.name, trace.batch ? 0 : null)}` },
                                                        attentionOf(s.name).replace(/\.$/, ""))]));
    return h;
  }

  function render() {
    const trace = JSON.parse(document.getElementById("trace").textContent);
    const steps = new Map(trace.steps.map((s) => [s.name, s]));
    const main = document.getElementById("report");
    if (trace.diff) {  // one scale for every step's |A − B|: from the diff's atol to the page's largest difference
      diffScale.lo = trace.diff.atol > 0 ? trace.diff.atol : 1e-7;
      diffScale.hi = Math.max(trace.diff.largest || 0, 10 * diffScale.lo);
    }
    main.append(header(trace));
    for (const view of [patchingSection(trace), interventionsSection(trace), pipelineView(trace), modelView(trace, steps), nextTokenSection(trace)]) if (view) main.append(view);
    // every attention's weights, in pipeline order: blocks.0.attn, blocks.0.cross_attn, blocks.1.attn, ...
    for (const pattern of trace.steps.filter((s) => s.name.endsWith("hook_pattern") && s.values && !trace.diff))
      for (const b of sequences(trace)) {  // a batch: the heatmaps and head view of each sequence
        const p = b === null ? pattern : seqStep(pattern, b, trace);
        if (p.shape.length === 3) main.append(attentionSection(p, trace, b === null ? steps : seqSteps(trace, b), b));
      }
    trace.steps.forEach((s, i) => main.append(stepSection(s, i, trace.steps.length, trace, steps)));
    main.append(claimsSection(trace, steps));
    // the canvases of the first screen painted before the first frame is (the layout this needs is
    // the frame's own); the rest as they are scrolled to
    requestAnimationFrame(() => {
      paintVisible();
      document.body.dataset.firstFrameMs = String(Math.round(performance.now()));
    });
  }

  try {
    render();
  } catch (e) {
    noteError(e && e.stack ? e.stack : e);
    throw e;
  } finally {
    document.body.dataset.rendered = errors.length ? "errors" : "ok";
    // ms from the start of the page's loading to the end of the script (the report test prints it, and
    // firstFrameMs: the first screen laid out, its canvases painted)
    document.body.dataset.drawnMs = String(Math.round(performance.now()));
  }
