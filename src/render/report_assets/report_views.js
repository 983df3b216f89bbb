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
    return sec;
  }
