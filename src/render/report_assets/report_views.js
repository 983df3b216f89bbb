  // attntrace report: the two overviews at the top of the page, both drawn
  // from the trace's steps alone. The model view: every attention of every
  // block (rows) × its heads (thumbnails; heads sharing a K/V head framed
  // together); a click opens that head in the attention's section. The
  // pipeline: each block as its stages in the order the run recorded them
  // (so pre-norm, decoders, RoPE and blocks without an FFN draw as they ran),
  // each box a link to its step.

  const THUMB = 64;  // px per side of a head's thumbnail

  // The attentions drawn in the model view: each hook_pattern of rank 3 (a
  // batch's sequence b0), in pipeline order.
  function attentionPatterns(trace) {
    if (trace.diff) return [];
    return trace.steps.filter((s) => s.name.endsWith("hook_pattern") && s.values)
      .map((s) => (trace.batch ? seqStep(s, 0, trace) : s)).filter((s) => s.shape.length === 3);
  }

  // "blocks.1.cross_attn." -> "block 1 · cross-attention"
  function attentionTitle(prefix) {
    const m = prefix.match(/^blocks\.(\d+)\.(\w+)\.$/);
    if (!m) return prefix.replace(/\.$/, "") || "attention";
    return `block ${m[1]} · ${m[2] === "cross_attn" ? "cross-attention" : "self-attention"}`;
  }

  // Shows head h of the attention `prefix`: its section scrolled to, that head
  // alone on in the head view, its heatmap marked.
  function openHead(prefix, h, b) {
    const sec = document.getElementById(attentionId(`${prefix}hook_pattern`, b));
    if (!sec) return;
    sec.dataset.selectedHead = String(h);
    const hv = sec.querySelector(".headview");
    if (hv && hv.selectOnly) hv.selectOnly(h);
    for (const s of sec.querySelectorAll(".slice[data-slice]")) s.classList.toggle("selected", s.dataset.slice === String(h));
    location.hash = sec.id;
    sec.scrollIntoView();
  }

  function modelView(trace, steps) {
    const patterns = attentionPatterns(trace);
    if (!patterns.length) return null;
    const b = trace.batch ? 0 : null;
    const rows = patterns.map((p) => {
      const prefix = attentionOf(p.name), [nh, tq, tk] = p.shape;
      const masked = maskTest(trace, b === null ? steps : seqSteps(trace, b), prefix), kv = kvOf(steps, prefix);
      const thumb = (h) => {
        const get = (i, j) => p.values[h][i][j];
        const c = el("canvas", { width: THUMB, height: THUMB });
        whenSeen(c, () => {  // painted when it comes near the screen (report_canvas.js)
          const scale = colourScale(tq, tk, get).scale;
          const image = cellImage(tq, tk, get, (i, j) => masked(h, i, j), (v) => heatRGB(v, scale));
          const ctx = c.getContext("2d");
          ctx.imageSmoothingEnabled = tq > THUMB || tk > THUMB;  // shrinking: average; growing: sharp cells
          ctx.drawImage(image, 0, 0, THUMB, THUMB);
        });
        return el("button", { type: "button", class: "thumb", "data-attention": prefix, "data-head": h,
                              title: `${attentionTitle(prefix)}, head ${p.labels[0][h]}${kv ? ` (K/V head kv${kv[h]})` : ""}: open its head view`,
                              onclick: () => openHead(prefix, h, b) }, c, el("span", {}, p.labels[0][h]));
      };
      // heads framed by the K/V head they read (GQA, MQA); one frame for all otherwise
      const groups = new Map();
      for (let h = 0; h < nh; ++h) {
        const g = kv ? kv[h] : 0;
        groups.set(g, [...(groups.get(g) || []), h]);
      }
      const heads = [...groups].map(([g, hs]) => el("div", { class: kv ? "kv-group" : "head-group" },
        kv ? el("span", { class: "kv-caption" }, `K/V kv${g}`) : null, hs.map(thumb)));
      return el("div", { class: "model-row", "data-attention": prefix },
        el("div", { class: "row-label" }, attentionTitle(prefix), el("div", { class: "muted" }, `${nh} heads · ${tq} × ${tk}`)),
        el("div", { class: "row-heads" }, heads));
    });
    const pooled = patterns.some((p) => p.pooled);
    return el("section", { class: "model-view", id: "model-view" }, el("h2", {}, "Model view"),
      el("p", { class: "note" }, "Every attention (rows: blocks, self- and cross-attention) and every head, each coloured up to " +
        "its own 99th-percentile weight; grey: masked. " + (pooled ? "Maps max-pooled for the page (see above). " : "") +
        "Click a head to open its head view."),
      el("div", { class: "model-grid" }, rows));
  }

  // ---- the pipeline: a step's box, from its name alone
  // The words come from the tables that declare them, written into the page by
  // the report (render/report.hpp, report_vocabulary): `boxes`, a step name's
  // last part -> its box (trace/steps.hpp, pipeline_box); `norms` and `positions`, a
  // norm kind's or positional encoding's spelling -> its display name
  // (lesson/config_fields.cpp; the header's config line reads `positions`). None are kept here.
  const VOCABULARY = JSON.parse(document.getElementById("vocabulary").textContent);
  // { block, part: attn | cross | ffn | norm | resid | model, label } of a step name
  function stageOf(name, trace) {
    const m = name.match(/^blocks\.(\d+)\.(.*)$/), rest = m ? m[2] : name, leaf = rest.split(".").pop();
    const block = m ? Number(m[1]) : null;
    // the trace's config writes norm only when it is not the default kind; a kind the vocabulary does not
    // name (a trace of another attntrace) is shown by its spelling
    const norm = trace.config.norm || VOCABULARY.norm_default;
    if (/^ln(\d+|_final)?\./.test(rest)) return { block, part: "norm", label: VOCABULARY.norms[norm] || norm };
    if (rest.startsWith("mlp.")) return { block, part: "ffn", label: VOCABULARY.boxes[leaf] || VOCABULARY.boxes.hook_mlp_out };
    const part = rest.startsWith("cross_attn.") || leaf === "hook_cross_attn_out" ? "cross"
      : rest.startsWith("attn.") || leaf === "hook_attn_out" ? "attn"
      : leaf === "hook_mlp_out" ? "ffn" : m ? "resid" : "model";
    // a name no catalogue writes (another implementation's trace): its own last part
    const label = VOCABULARY.boxes[leaf] || leaf.replace(/^hook_/, "");
    return { block, part, label };
  }
  const PART_NAME = { attn: "self-attention", cross: "cross-attention", ffn: "feed-forward" };

  // One row of boxes: consecutive steps of one stage in one box; boxes of one
  // sub-block (attention, FFN) framed together.
  function stageRow(names, trace) {
    const boxes = [];
    for (const name of names) {
      const s = stageOf(name, trace), last = boxes[boxes.length - 1];
      if (last && last.part === s.part && last.label === s.label) last.steps.push(name);
      else boxes.push({ ...s, steps: [name] });
    }
    const row = el("div", { class: "pipe-row" });
    let frame = null;
    boxes.forEach((bx, k) => {
      const box = el("a", { class: `stage p-${bx.part}`, href: `#step-${bx.steps[0]}`, "data-stage": bx.label,
                            title: bx.steps.join("\n") }, bx.label);
      const arrow = k ? el("span", { class: "arrow", "aria-hidden": "true" }, "→") : null;
      if (PART_NAME[bx.part]) {
        if (!frame || frame.dataset.part !== bx.part) {
          frame = el("div", { class: `pipe-part p-${bx.part}`, "data-part": bx.part },
                     el("span", { class: "part-caption" }, PART_NAME[bx.part]));
          row.append(...(arrow ? [arrow] : []), frame);
          frame.append(box);
          return;
        }
        frame.append(el("span", { class: "arrow", "aria-hidden": "true" }, "→"), box);
        return;
      }
      frame = null;
      row.append(...(arrow ? [arrow] : []), box);
    });
    return { row, boxes };
  }

  // What a block's order says: pre- or post-norm, decoder, FFN or none.
  function blockWords(boxes) {
    const first = (p) => boxes.findIndex((b) => b.part === p);
    const norm = first("norm"), attn = first("attn");
    const words = [];
    if (first("cross") >= 0) words.push("decoder block: self-attention, cross-attention, feed-forward");
    if (norm >= 0) words.push(norm < attn ? "pre-norm: normalised before each sub-block" : "post-norm: add, then normalise");
    if (first("ffn") < 0) words.push("no feed-forward");
    if (boxes.some((b) => b.label === VOCABULARY.boxes.hook_rot_q)) words.push("RoPE rotates Q and K");
    return words.join(" · ");
  }

  // The blocks a trace records: "0–11", or "5, 7" when they are not consecutive (run --blocks)
  const blockRange = (bs) => (bs.every((b, k) => b === bs[0] + k) ? `${bs[0]}–${bs[bs.length - 1]}` : bs.join(", "));

  function pipelineView(trace) {
    if (trace.diff || !trace.steps.length) return null;
    const byBlock = new Map();  // block ("before", "after": outside the blocks) -> step names, in order
    let seenBlock = false;
    for (const s of trace.steps) {
      let { block } = stageOf(s.name, trace);
      if (block === null) block = seenBlock ? "after" : "before";
      else seenBlock = true;
      byBlock.set(block, [...(byBlock.get(block) || []), s.name]);
    }
    const blocks = [...byBlock.keys()].filter((b) => typeof b === "number");
    const sec = el("section", { class: "pipeline", id: "pipeline" }, el("h2", {}, "Pipeline"),
      el("p", { class: "note" }, "The stages this run recorded, in its order" +
        (blocks.length > 1 ? `, for each of its ${blocks.length} stacked blocks` : "") +
        ". Each box links to its step; hover a box for the steps it holds."));
    if (byBlock.has("before")) sec.append(el("div", { class: "pipe-block" }, el("h3", {}, "Before the blocks"),
                                             stageRow(byBlock.get("before"), trace).row));
    blocks.forEach((b, k) => {
      const { row, boxes } = stageRow(byBlock.get(b), trace);
      // 0-based, as the step names count: "block 1 (of blocks 0–2)"
      const title = `block ${b}${blocks.length > 1 ? ` (of blocks ${blockRange(blocks)})` : ""}`, words = blockWords(boxes);
      if (k === 0) sec.append(el("div", { class: "pipe-block", "data-block": b }, el("h3", {}, title),
                                 words ? el("p", { class: "note" }, words) : null, row));
      else sec.append(el("details", { class: "pipe-block", "data-block": b },
                         el("summary", {}, title, words ? el("span", { class: "muted" }, ` · ${words}`) : null), row));
    });
    if (byBlock.has("after")) sec.append(el("div", { class: "pipe-block" }, el("h3", {}, "After the blocks"),
                                            stageRow(byBlock.get("after"), trace).row));
    return sec;
  }

  // ---- interventions (--set, --ablate): what was changed, which steps moved and by how much, and the
  // next tokens before and after (the export's "interventions" field, evaluate/intervened.hpp), as computed
  function interventionsSection(trace) {
    const iv = trace.interventions;
    if (!iv || trace.diff) return null;
    const sec = el("section", { class: "interventions", id: "interventions" }, el("h2", {}, "Interventions"));
    sec.append(el("p", { class: "note" }, "The steps on this page are the changed run's; the original run was computed beside it."));
    sec.append(el("ul", {}, iv.changes.map((c) => el("li", {}, el("code", {}, c.flag), `: ${c.count} cells of `,
      el("a", { href: `#step-${c.step}` }, el("code", {}, c.step)), ` (${c.cells}) set to ${c.value}`))));
    const rows = iv.changed_steps;
    sec.append(el("p", { class: "note" }, `${rows.length} steps changed, ${iv.unchanged_steps} unchanged.`));
    if (rows.length) {
      const f = numberFormat(rows.map((r) => r.max_abs_change));
      sec.append(el("table", { class: "matrix changed-steps", "data-format": f.kind },
        el("caption", { class: "num-format" }, `numbers: ${f.caption}`),
        el("thead", {}, el("tr", {}, ["step", "cells changed", "max |Δ|"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows.map((r) => el("tr", {},
          el("th", {}, el("a", { href: `#step-${r.name}` }, el("code", {}, r.name))),
          el("td", {}, `${r.changed}/${r.cells}`),
          el("td", { title: `${exact(r.max_abs_change)}` }, f.text(r.max_abs_change)))))));
    }
    const before = iv.next_tokens_before, after = iv.next_tokens_after;
    if (before && after && Array.isArray(before.next_tokens) && Array.isArray(after.next_tokens)) {
      const n = Math.max(before.next_tokens.length, after.next_tokens.length);
      const f = numberFormat([...before.next_tokens, ...after.next_tokens].map((t) => t.probability));
      const side = (list, k) => list[k] ? [tokenCell("td", { class: "token" }, list[k].token),
        el("td", { title: `p ${exact(list[k].probability)}` }, f.text(list[k].probability))] : [el("td", {}), el("td", {})];
      sec.append(el("h3", {}, "Next token, before and after"));
      sec.append(el("table", { class: "matrix next-tokens-before-after", "data-format": f.kind },
        el("caption", { class: "num-format" }, `numbers: ${f.caption}`),
        el("thead", {}, el("tr", {}, ["rank", "before", "p", "after", "p"].map((h) => el("th", {}, h)))),
        el("tbody", {}, Array.from({ length: n }, (_, k) => el("tr", {}, el("th", {}, String(k + 1)),
          ...side(before.next_tokens, k), ...side(after.next_tokens, k))))));
    }
    return sec;
  }

  // ---- activation patching (`attntrace patch --report`): the normalised logit difference per block x head
  // (or position), as the command computed it (the page's "patching" field, render/patch_view.hpp); a
  // diverging scale around 0: red restores the clean answer, blue pushes away from it
  function patchingSection(trace) {
    const p = trace.patching;
    if (!p || trace.diff) return null;
    const sec = el("section", { class: "patching", id: "patching" }, el("h2", {}, `Activation patching: ${p.step} over ${p.over}`));
    sec.append(el("p", { class: "note" }, `Clean “${p.clean.text}”, corrupt “${p.corrupt.text}” (this page's run). `,
      `LD = logit[`, tokenCell("span", {}, p.answer.token), `] − logit[`, tokenCell("span", {}, p.wrong.token),
      `] after the last token: clean ${fmt(p.logit_diff_clean)}, corrupt ${fmt(p.logit_diff_corrupt)}. `,
      "Each cell: the corrupt run with that cell taken from the clean run, (LD − LD corrupt) / (LD clean − LD corrupt): ",
      "1 restores the clean answer, 0 changes nothing."));
    const all = p.normalized.flat(), hi = Math.max(1e-12, ...all.map((v) => Math.abs(v)));
    const shade = (v) => {
      const a = Math.min(1, Math.abs(v) / hi), c = Math.round(255 * (1 - a));
      return v >= 0 ? `rgb(255, ${c}, ${c})` : `rgb(${c}, ${c}, 255)`;
    };
    const f = numberFormat(all);
    sec.append(el("table", { class: "matrix patching-map", "data-format": f.kind },
      el("caption", { class: "num-format" }, `numbers: ${f.caption}; colour: −${fmt(hi)} (blue) to ${fmt(hi)} (red)`),
      el("thead", {}, el("tr", {}, el("th", {}, "block"), p.columns.map((c) => tokenCell("th", {}, c)))),
      el("tbody", {}, p.normalized.map((row, b) => el("tr", {}, el("th", {}, el("code", {}, p.rows[b])),
        row.map((v, c) => el("td", { style: `background: ${shade(v)}`, title: `LD ${exact(p.logit_diff[b][c])}, normalised ${exact(v)}` },
          f.text(v))))))));
    return sec;
  }

  // ---- the next token: the table the run computed from the last row of the logits
  // (the export's "model" field, evaluate/model_end.hpp), drawn as it is; nothing computed here
  function nextTokenSection(trace) {
    const m = trace.model;
    if (!m || trace.diff) return null;
    const after = trace.tokens.length ? trace.tokens[trace.tokens.length - 1] : "";
    const logits = trace.steps.length ? trace.steps[trace.steps.length - 1].name : "the logits";
    const sec = el("section", { class: "next-token", id: "next-token" }, el("h2", {}, "Next token"));
    if (m.output) sec.append(el("p", { class: "note" }, `No next token: ${m.output}.`));
    if (m.not_computed) sec.append(el("p", { class: "note" }, `Not computed: ${m.not_computed}.`));
    if (!Array.isArray(m.next_tokens)) return sec;
    const rows = m.next_tokens, f = numberFormat(rows.flatMap((t) => [t.logit, t.probability]));
    sec.append(el("p", { class: "note" }, `After “${after}”: p = softmax of the last row of the logits (`,
      el("a", { href: `#step-${logits}` }, el("code", {}, logits)), "), over the whole vocabulary; the ",
      `${rows.length} most likely tokens, as `, el("code", {}, "attntrace run"), " prints them."));
    sec.append(el("table", { class: "matrix next-tokens", "data-format": f.kind },
      el("caption", { class: "num-format" }, `numbers: ${f.caption}`),
      el("thead", {}, el("tr", {}, ["rank", "token", "id", "logit", "p", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((t, k) => el("tr", { "data-token-id": t.id },
        el("th", {}, String(k + 1)), tokenCell("td", { class: "token" }, t.token), el("td", {}, String(t.id)),
        el("td", { title: `logit ${exact(t.logit)}` }, f.text(t.logit)),
        el("td", { title: `p ${exact(t.probability)}` }, f.text(t.probability)),
        el("td", { class: "bar" }, el("span", { style: `width: ${(100 * Math.max(0, Math.min(1, t.probability))).toFixed(1)}%` })))))));
    const slider = temperatureSlider(trace, rows.length);
    if (slider) sec.append(slider);
    return sec;
  }

  // ---- a temperature slider over the last row of the logits the page holds: the distribution
  // softmax(logits / T) redrawn here (as `decode --temperature T` draws from it), its top rows as a
  // table; at T = 1 the run's own table above. Only when the page keeps that row whole.
  function temperatureSlider(trace, k) {
    const logits = trace.steps.length ? trace.steps[trace.steps.length - 1] : null;
    if (!logits || logits.name !== "unembed" || !Array.isArray(logits.values) || logits.pooled) return null;
    const last = logits.values[logits.values.length - 1], labels = logits.labels[1];
    if (!Array.isArray(last) || !last.length || last.some((v) => typeof v !== "number")) return null;
    const out = el("tbody", {}), value = el("output", {}, "1.00");
    const draw = (T) => {
      value.textContent = T.toFixed(2) + (T === 1 ? " (the run's distribution)" : T === 0 ? " (greedy: the argmax)" : "");
      const order = last.map((_, i) => i).sort((a, b) => last[b] - last[a] || a - b);
      const max = last[order[0]];
      let p;
      if (T === 0) p = last.map((_, i) => (i === order[0] ? 1 : 0));
      else {
        const e = last.map((v) => Math.exp((v - max) / T)), sum = e.reduce((a, b) => a + b, 0);
        p = e.map((v) => v / sum);
      }
      out.replaceChildren(...order.slice(0, k).map((i, r) => el("tr", { "data-drawn-id": i },
        el("th", {}, String(r + 1)), tokenCell("td", { class: "token" }, labels[i]), el("td", {}, String(i)),
        el("td", { title: `p ${p[i]}` }, p[i].toFixed(4)),
        el("td", { class: "bar" }, el("span", { style: `width: ${(100 * p[i]).toFixed(1)}%` })))));
    };
    const input = el("input", { type: "range", min: "0", max: "2", step: "0.05", value: "1", "aria-label": "temperature" });
    input.addEventListener("input", () => draw(Number(input.value)));
    draw(1);
    return el("div", { class: "temperature" },
      el("p", { class: "note" }, "Temperature: p = softmax(logits / T) over the last row of ", el("code", {}, "unembed"),
        ", redrawn in this page as the slider moves (T = 0: the argmax alone). ", el("label", {}, "T = ", input, " ", value)),
      el("table", { class: "matrix next-tokens-temperature" },
        el("thead", {}, el("tr", {}, ["rank", "token", "id", "p", ""].map((h) => el("th", {}, h)))), out));
  }
