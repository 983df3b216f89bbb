// attntrace report: draws the page from the trace in the JSON element #trace
// (docs/trace-format.md). Plain JavaScript, nothing loaded from anywhere.
// The page's script is report.js, report_claims.js, report_canvas.js,
// report_views.js and report_main.js joined in that order inside one
// strict-mode function (cmake/embed_report_assets.cmake). This file: errors,
// DOM helpers, number formats, the matrices, the attention sections and head
// view, and the step sections. report_main.js draws the page.

  // ---- errors: kept on <body>, where a headless browser's DOM dump shows them
  const errors = [];
  function noteError(text) {
    errors.push(String(text).replace(/\s+/g, " "));
    document.body.dataset.errors = errors.join(" | ");
  }
  window.addEventListener("error", (e) => noteError(e.message || "script error"));
  window.addEventListener("unhandledrejection", (e) => noteError(e.reason));
  const consoleError = console.error;
  console.error = function (...args) {
    noteError(args.join(" "));
    consoleError.apply(console, args);
  };

  // ---- small DOM helpers
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  // The SVG namespace, taken from an <svg> the HTML parser made (no URL in this file).
  const SVG_NS = (() => {
    const d = document.createElement("div");
    d.innerHTML = "<svg></svg>";
    return d.firstChild.namespaceURI;
  })();
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  // ---- a token as the page shows it: the tokenizer's marks (␣ a space, ↵ a newline, ⇥ a tab) and
  // core/printable.hpp's escapes (\x08, \r: a control character, or a byte that is no whole UTF-8
  // character; \u0085: a C1 control or a bidirectional mark), never a raw control (an empty box).
  // tokenTitle(label): what each mark and escape in it stands for, for the hover; null when none.
  const TOKEN_MARKS = { "␣": "a space", "↵": "a newline", "⇥": "a tab" };
  const C0_NAMES = ["NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS (backspace)", "HT", "LF", "VT",
                    "FF (form feed)", "CR (carriage return)", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
                    "SYN", "ETB", "CAN", "EM", "SUB", "ESC (escape)", "FS", "GS", "RS", "US"];
  function escapeMeaning(hex, byte) {
    const code = parseInt(hex, 16), u = `U+${hex.toUpperCase().padStart(4, "0")}`;
    if (byte && code >= 0x80) return `the byte 0x${hex.toUpperCase()}: part of a UTF-8 character cut between tokens`;
    if (code < 0x20) return `${u} ${C0_NAMES[code]}, a control character`;
    if (code === 0x7f) return `${u} DEL, a control character`;
    if (code >= 0x80 && code <= 0x9f) return `${u}, a C1 control character`;
    return `${u}, an invisible formatting character`;
  }
  function tokenTitle(label) {
    if (typeof label !== "string") return null;
    const meanings = new Map();
    for (const [mark, what] of Object.entries(TOKEN_MARKS)) if (label.includes(mark)) meanings.set(mark, what);
    for (const m of label.matchAll(/\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\r/g))
      meanings.set(m[0], escapeMeaning(m[1] || m[2] || "0d", m[1] !== undefined));
    if (!meanings.size) return null;
    return `“${label}”: ${[...meanings].map(([k, v]) => `${k} is ${v}`).join("; ")}`;
  }
  // A token label as an element's text, with its hover.
  const tokenCell = (tag, attrs, label) => el(tag, { ...attrs, title: tokenTitle(label) }, label);

  // ---- numbers: JSON numbers, or "-inf" for a blocked cell
  const PRECISION = 4;  // as the terminal's run view
  const MAX_ROWS = 16, MAX_COLS = 12, MAX_SLICES = 4;  // beyond these, elided until "show all"
  function fmt(x, p = PRECISION) {
    if (x === "-inf") return "−inf";
    if (typeof x !== "number") return x === null || x === undefined ? "—" : String(x);
    const a = Math.abs(x);
    if (a !== 0 && (a >= 1e6 || a < Math.pow(10, -p))) return x.toPrecision(p);
    return x.toFixed(p);
  }
  const exact = (x) => (x === "-inf" ? "-inf" : String(x));  // the JSON's shortest round-trip text

  // One number format for a whole table, said in its caption: fixed decimals
  // (at least p) when the table's range allows them (its smallest nonzero |x|
  // keeps 2 significant digits within MAX_DECIMALS decimals, its largest is
  // below FIXED_BELOW), else scientific notation with p significant digits in
  // every cell. Never 3.268e-7 beside 0.00001689 beside 0.0000.
  // Attention weights (`weights`: every value in [0, 1], what a share of a row
  // is read as) keep p decimals whatever their range: a trained model's weights
  // reach 1e-10, which would put a whole table in scientific notation; a weight
  // that is not 0 but rounds to it is written "<0.0001", its exact value on hover.
  const MAX_DECIMALS = 6, FIXED_BELOW = 1e6;
  function numberFormat(nums, p = PRECISION, weights = false) {
    if (weights && nums.every((x) => typeof x !== "number" || (x >= 0 && x <= 1))) {
      const least = Math.pow(10, -p), below = least / 2, tiny = `<${least.toFixed(p)}`;
      const some = nums.some((x) => typeof x === "number" && x > 0 && x < below);
      return { kind: "fixed", caption: `${p} decimals${some ? `; ${tiny}: a weight that is not 0 but rounds to it` : ""}`,
               text: (x) => (typeof x === "number" ? (x > 0 && x < below ? tiny : x.toFixed(p)) : fmt(x)) };
    }
    let lo = Infinity, hi = 0;
    for (const x of nums)
      if (typeof x === "number" && Number.isFinite(x) && x !== 0) {
        const a = Math.abs(x);
        if (a < lo) lo = a;
        if (a > hi) hi = a;
      }
    const decimals = hi === 0 ? p : Math.max(p, 1 - Math.floor(Math.log10(lo)));
    const other = (x) => (typeof x === "number" ? String(x) : fmt(x));  // inf, NaN: as they are
    if (hi < FIXED_BELOW && decimals <= Math.max(p, MAX_DECIMALS))
      return { kind: "fixed", caption: `${decimals} decimals`,
               text: (x) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(decimals) : other(x)) };
    return { kind: "scientific", caption: `scientific notation, ${p} significant digits (|values| ${lo.toExponential(1)} to ${hi.toExponential(1)})`,
             text: (x) => (typeof x === "number" && Number.isFinite(x) ? x.toExponential(p - 1) : other(x)) };
  }

  // ---- a diff page (report A B): each cell's |A − B| as one of three kinds, and the
  // cells beyond tolerance on one logarithmic scale for the whole page (trace.diff.scale:
  // from the diff's atol, palest, to the page's largest difference, darkest), so that
  // float noise in a matching step stays pale where a real divergence is dark.
  // `beyond` (the page's per-cell record, 1: |a − b| > atol + rtol·|a|) decides
  // within and beyond; a cell without it (a pooled map) is within when ≤ atol.
  const DIFF_WORDS = { equal: "equal: the same float in A and B", within: "within the float32 tolerance",
                       beyond: "beyond the tolerance: diverges" };
  function diffKind(v, beyond) {
    if (v === 0) return "equal";
    if (typeof v !== "number" || !Number.isFinite(v)) return "beyond";  // "inf": -inf against a number
    if (beyond === 0 || beyond === 1) return beyond ? "beyond" : "within";
    return v <= diffScale.lo ? "within" : "beyond";
  }
  // The page's scale, set by render() before anything is drawn (report_main.js).
  const diffScale = { lo: 1e-4, hi: 1 };
  // A beyond cell's shade in [MIN_SHADE, 1]: log(|A − B| / lo) against log(hi / lo).
  const MIN_SHADE = 0.2;
  function diffShade(v) {
    if (typeof v !== "number" || !Number.isFinite(v)) return 1;
    const { lo, hi } = diffScale, t = hi > lo ? Math.log(Math.max(v, lo) / lo) / Math.log(hi / lo) : 1;
    return MIN_SHADE + (1 - MIN_SHADE) * Math.max(0, Math.min(1, t));
  }

  // Text with `code` spans (a lesson's description, the page's banner, notes) as
  // text nodes and <code> elements: never parsed as HTML.
  function withCode(text) {
    const parts = String(text).split("`");
    if (parts.length % 2 === 0) parts.splice(-2, 2, `${parts[parts.length - 2]}\`${parts[parts.length - 1]}`);  // an unpaired `
    return parts.map((part, k) => (k % 2 ? el("code", {}, part) : part));
  }

  // Indices to show out of n, with -1 where the middle is elided.
  function shown(n, max, all) {
    if (all || n <= max) return [...Array(n).keys()];
    const head = Math.ceil(max / 2), tail = max - head;
    return [...Array(head).keys(), -1, ...Array.from({ length: tail }, (_, i) => n - tail + i)];
  }

  // A rank-3 tensor as 2-D slices along axis k: get(s, i, j) over the other two axes, in order.
  function slicer(values, k) {
    if (k === 0) return (s, i, j) => values[s][i][j];
    if (k === 1) return (s, i, j) => values[i][s][j];
    return (s, i, j) => values[i][j][s];
  }

  const MARK = { "agrees": "✓", "agrees-when-rounded": "≈", "disagrees": "✗", "not-checkable": "?", "agrees-from-given": "↳" };

  // The axis a rank-3 step is sliced along: its query heads, or K/V's kv_head, else the first.
  function headAxis(axes) {
    const k = axes.indexOf("head");
    return k >= 0 ? k : Math.max(0, axes.indexOf("kv_head"));
  }

  // ---- one matrix (rank 0..3) as token-labelled tables
  // opts.heat: colour cells by value in [0, 1]; opts.masked(s, i, j): cell blocked by the mask;
  // opts.diff: a diff page's |A − B| (diffKind: equal, within tolerance, beyond; one scale for the page).
  // Every table of one matrix shares one number format (numberFormat), said in each table's caption.
  function matrixBlock(step, values, all, opts = {}) {
    const block = el("div", { class: "matrix-block" });
    const shape = step.shape, axes = step.axes, labels = step.labels;
    const short = step.name.split(".").pop();
    let format = null;  // made only when a table is drawn: a canvas shows no numbers
    const numbersOf = () => format || (format = numberFormat(flat(values), PRECISION, !!opts.heat));
    const cell = (v, where, masked, beyond) => {
      const kind = opts.diff ? diffKind(v, beyond) : null;
      const td = el("td", { title: `${short}[${where.join(", ")}] = ${exact(v)}${masked ? " (masked: -inf before softmax)" : ""}` +
                                   (kind ? ` (${DIFF_WORDS[kind]})` : "") },
                    numbersOf().text(v));
      if (v === "-inf") td.className = "neg-inf";
      if (masked) td.className = "masked";
      else if (kind) {
        td.className = `diff-${kind}`;
        if (kind === "beyond") {
          const x = diffShade(v);
          td.style.background = `rgba(var(--diverges), ${x.toFixed(3)})`;
          if (x > 0.55) td.style.color = "#fff";
        }
      } else if (opts.heat && typeof v === "number") {
        const x = Math.max(0, Math.min(1, v));
        td.style.background = `rgba(var(--heat), ${x.toFixed(3)})`;
        if (x > 0.55) td.style.color = "#fff";
      }
      return td;
    };
    // get(i, j): the value; beyondAt(i, j): a diff's cell beyond tolerance (null: no such record)
    const table = (rows, cols, rowAxis, colAxis, get, prefix, masked, beyondAt) => {
      if (rowAxis !== null && useCanvas(rows, cols))  // too large to read as numbers: a canvas heatmap
        return canvasHeatmap({ rows, cols, get, masked, rowLabels: labels[rowAxis], colLabels: labels[colAxis], name: short,
                               rowAxis: axes[rowAxis], colAxis: axes[colAxis], signed: !opts.heat && !opts.diff,
                               rowBlock: pooledBlock(step, rowAxis), rowTokens: pooledFrom(step, rowAxis, rows),
                               colBlock: pooledBlock(step, colAxis), colTokens: pooledFrom(step, colAxis, cols),
                               diff: opts.diff ? { beyondAt } : null,
                               where: (i, j) => [...prefix, labels[rowAxis][i], labels[colAxis][j]].join(", ") });
      const rl = rowAxis === null ? null : labels[rowAxis], cl = labels[colAxis];
      const corner = rowAxis === null ? "" : `${axes[rowAxis]} \\ ${axes[colAxis]}`;
      const cs = shown(cols, MAX_COLS, all), rs = rowAxis === null ? [0] : shown(rows, MAX_ROWS, all);
      const head = el("tr", {}, el("th", { class: "corner" }, corner),
                      cs.map((j) => (j < 0 ? el("th", { class: "gap" }, "…") : tokenCell("th", {}, cl[j]))));
      const body = rs.map((i) => {
        if (i < 0) return el("tr", {}, el("th", { class: "gap" }, "⋮"), cs.map(() => el("td", { class: "gap" }, "⋮")));
        return el("tr", {}, rl ? tokenCell("th", {}, rl[i]) : el("th", {}, ""),
                  cs.map((j) => {
                    if (j < 0) return el("td", { class: "gap" }, "…");
                    const where = [...prefix, ...(rl ? [rl[i]] : []), cl[j]];
                    return cell(get(i, j), where, masked && masked(i, j), beyondAt ? beyondAt(i, j) : null);
                  }));
      });
      return el("table", { class: "matrix" + (opts.heat ? " heat" : "") + (opts.diff ? " diff" : ""), "data-format": numbersOf().kind },
                el("caption", { class: "num-format" }, `numbers: ${numbersOf().caption}`),
                el("thead", {}, head), el("tbody", {}, body));
    };
    const beyond = opts.diff && opts.diff.beyond ? opts.diff.beyond : null;  // shaped as the values
    if (shape.length === 0) {
      block.append(el("table", { class: "matrix" }, el("caption", { class: "num-format" }, `numbers: ${numbersOf().caption}`),
                      el("tbody", {}, el("tr", {}, cell(values, [], false, beyond)))));
    } else if (shape.length === 1) {
      block.append(table(1, shape[0], null, 0, (i, j) => values[j], [], null, beyond && ((i, j) => beyond[j])));
    } else if (shape.length === 2) {
      block.append(table(shape[0], shape[1], 0, 1, (i, j) => values[i][j], [], null, beyond && ((i, j) => beyond[i][j])));
    } else {
      // One table per head (or per index of the first axis), as the terminal shows it.
      let k = headAxis(axes);
      const [r, c] = [0, 1, 2].filter((a) => a !== k), get = slicer(values, k), getBeyond = beyond && slicer(beyond, k);
      // attention weights: every head (GQA's groups are what the lesson teaches), each with its K/V head
      // every slice when it is a heatmap (attention weights, or any canvas): compact, and the heads are the point
      const every = opts.heat || opts.diff || useCanvas(shape[r], shape[c]);
      for (const s of shown(shape[k], every ? shape[k] : MAX_SLICES, all)) {
        if (s < 0) {
          block.append(el("div", { class: "slice gap" }, `… ${shape[k] - MAX_SLICES} more ${axes[k]} slices`));
          continue;
        }
        const masked = opts.masked && k === 0 ? (i, j) => opts.masked(s, i, j) : null;
        const group = opts.kvOf && axes[k] === "head" ? ` · reads K/V head kv${opts.kvOf[s]}` : "";
        block.append(el("div", { class: "slice", "data-slice": s }, el("p", { class: "slice-caption" }, `${axes[k]} ${labels[k][s]}${group}`),
                        table(shape[r], shape[c], r, c, (i, j) => get(s, i, j), [labels[k][s]], masked,
                              getBeyond && ((i, j) => getBeyond(s, i, j)))));
      }
    }
    return block;
  }

  // Tokens per cell along axis k of a step the page keeps pooled (1 otherwise).
  const pooledBlock = (step, k) => (step.pooled && step.pooled.block ? step.pooled.block[k] || 1 : 1);
  // The tokens along axis k before pooling (n, the cells, otherwise).
  const pooledFrom = (step, k, n) => (step.pooled && step.pooled.from_shape ? step.pooled.from_shape[k] || n : n);

  // Whether matrixBlock elides anything: the same axes and limits it uses.
  // A matrix past CANVAS_ABOVE is a canvas: it elides nothing.
  function elided(step, opts = {}) {
    const s = step.shape;
    if (s.length <= 1) return (s[0] || 0) > MAX_COLS;
    if (s.length === 2) return !useCanvas(s[0], s[1]) && (s[0] > MAX_ROWS || s[1] > MAX_COLS);
    const k = headAxis(step.axes), [r, c] = [0, 1, 2].filter((a) => a !== k);
    return (!opts.heat && !opts.diff && !useCanvas(s[r], s[c]) && s[k] > MAX_SLICES) || (!useCanvas(s[r], s[c]) && (s[r] > MAX_ROWS || s[c] > MAX_COLS));
  }

  // A matrix with its "show all" toggle when it is elided.
  function matrixWithToggle(step, values, opts) {
    const wrap = el("div", {});
    let all = false;
    const draw = () => {
      wrap.replaceChildren(matrixBlock(step, values, all, opts));
      if (elided(step, opts))
        wrap.append(el("button", { type: "button", onclick: () => { all = !all; draw(); } },
                       all ? "show fewer" : `show all (${step.shape.join(" × ")})`));
    };
    draw();
    return wrap;
  }

  // ---- a batch (trace.batch): sequence b of a step (its first axis is `batch`) as a
  // one-sequence step, its token axes labelled with that sequence's tokens
  const TOKEN_AXES = ["pos", "query", "key"];
  function seqStep(step, b, trace) {
    if (!trace.batch || step.axes[0] !== "batch") return step;
    const toks = trace.batch.sequences[b], axes = step.axes.slice(1);
    const pick = (v) => (Array.isArray(v) ? v[b] : v);
    return { ...step, shape: step.shape.slice(1), axes,
             labels: step.labels.slice(1).map((l, k) => (TOKEN_AXES.includes(axes[k]) && l.length === toks.length ? toks : l)),
             values: pick(step.values), formula_values: step.formula_values === undefined ? undefined : pick(step.formula_values) };
  }
  const seqSteps = (trace, b) => new Map(trace.steps.map((s) => [s.name, seqStep(s, b, trace)]));
  // The sequences to draw a step for: each of a batch, else the one (null).
  const sequences = (trace) => (trace.batch ? trace.batch.sequences.map((_, b) => b) : [null]);

  // ---- an attention's steps share the prefix of its weights: "blocks.1.cross_attn." for
  // "blocks.1.cross_attn.hook_pattern"
  const attentionOf = (name) => name.slice(0, name.length - "hook_pattern".length);
  const isCross = (prefix) => prefix.includes("cross_attn.");
  // The K/V head each query head of an attention reads, when recorded (GQA, MQA).
  function kvOf(steps, prefix) {
    const g = steps.get(`${prefix}hook_kv_head`);
    return g && Array.isArray(g.values) && g.values.some((v, h) => v !== h) ? g.values : null;
  }

  // ---- masked cells of one attention's weights, from the steps of that attention that
  // record them; a cross-attention has no mask (every decoder token sees the whole memory)
  function maskTest(trace, steps, prefix) {
    const scores = steps.get(`${prefix}hook_attn_scores`), mask = steps.get(`${prefix}hook_mask`);
    // config.mask_at "weights": nothing -inf in the scores; M holds 1 (visible) and 0 (zeroed)
    if (trace.config.mask_at === "weights" && mask && mask.values) return (h, i, j) => mask.values[i][j] === 0;
    if (scores && scores.values) return (h, i, j) => scores.values[h][i][j] === "-inf";
    if (mask && mask.values) return (h, i, j) => mask.values[i][j] === "-inf";
    if (!isCross(prefix) && trace.config.mask === "causal" && !trace.query_tokens) return (h, i, j) => j > i;
    return () => false;
  }

  const headColour = (h, n) => `hsl(${Math.round((360 * h) / Math.max(n, 1) + 210) % 360}, 70%, 42%)`;
  const MAX_LINES = 40000;  // beyond this many query-key-head lines the view says so instead of drawing
  // Past this many tokens, every head's lines at once are a tangle (64 tokens: a 1.5k-px-tall
  // knot of 4 colours): the view starts with the first head alone on.
  const ALL_HEADS_UP_TO = 16;

  // ---- the head view: queries left, keys right, a line per pair with opacity = weight
  function headView(step, masked) {
    const [nh, tq, t] = step.shape, ql = step.labels[1], kl = step.labels[2], A = step.values;
    const view = el("div", { class: "headview" }, el("h3", {}, "Head view"),
      el("p", { class: "note" }, "Each line joins a query (left) to a key (right), in its head's colour; the darker, the " +
        "more it reads from that key. Hover a token to see only its lines, click it to keep them; hover a line for its " +
        "weight; click a head to show or hide it."));
    if (nh * tq * t > MAX_LINES) {
      view.append(el("p", { class: "note" }, `Too many lines to draw (${nh} × ${tq} × ${t}); see the heatmaps.`));
      return view;
    }
    // Each side as wide as its longest token (13 px monospace: 8 px a character), the lines 280 px across:
    // short tokens ("t23") keep the picture within a phone's width, unscaled.
    const ROW = 24, TOP = 16, CHAR = 8, PAD = 12, SPAN = 280;
    const room = (labels) => PAD + CHAR * Math.max(3, ...labels.map((l) => [...String(l)].length));
    const XL = room(ql), XR = XL + SPAN, width = XR + room(kl);
    const height = TOP + ROW * Math.max(tq, t);
    const pic = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                             "aria-label": "attention of each query token to each key token" });
    // A head's lines are made when it is first shown, a line's weight (its <title>) when the
    // pointer first reaches it: 64 tokens are 16k lines, whose layout took a second.
    const groups = [], filled = new Set();
    for (let h = 0; h < nh; ++h) {
      const g = svg("g", { "data-head": h, stroke: headColour(h, nh), "stroke-width": 2 });
      groups.push(g);
      pic.append(g);
    }
    const show = (h, on) => {
      if (on && !filled.has(h)) {
        filled.add(h);
        for (let i = 0; i < tq; ++i)
          for (let j = 0; j < t; ++j) {
            const w = A[h][i][j];
            if (typeof w !== "number" || w <= 0 || masked(h, i, j)) continue;
            groups[h].append(svg("line", { x1: XL + 6, y1: TOP + ROW * i - 4, x2: XR - 6, y2: TOP + ROW * j - 4,
                                           "stroke-opacity": w.toFixed(4), "data-q": i, "data-k": j }));
          }
      }
      groups[h].style.display = on ? "" : "none";
    };
    pic.addEventListener("mouseover", (e) => {
      const line = e.target;
      if (line.tagName !== "line" || line.firstChild) return;
      const h = Number(line.parentNode.dataset.head), i = Number(line.dataset.q), j = Number(line.dataset.k);
      const tip = svg("title", {});
      tip.textContent = `${step.labels[0][h]}: ${ql[i]} → ${kl[j]} = ${exact(A[h][i][j])}`;
      line.append(tip);
    });
    // A token hovered shows only its lines; a token clicked keeps them until it is clicked again.
    let pinned = null;
    const focus = (attr, idx, on) => {
      pic.classList.toggle("focus", on);
      for (const line of pic.querySelectorAll("line")) line.classList.toggle("on", on && line.dataset[attr] === String(idx));
    };
    const token = (x, y, text, anchor, attr, idx) => {
      const e = svg("text", { x, y, "text-anchor": anchor, "data-token": `${attr}${idx}` });
      e.textContent = text;
      const what = tokenTitle(text);
      if (what) e.append(Object.assign(svg("title", {}), { textContent: what }));
      e.addEventListener("mouseenter", () => { e.classList.add("on"); if (!pinned) focus(attr, idx, true); });
      e.addEventListener("mouseleave", () => { if (pinned !== e) e.classList.remove("on"); if (!pinned) focus(attr, idx, false); });
      e.addEventListener("click", () => {
        if (pinned && pinned !== e) pinned.classList.remove("on", "pinned");
        pinned = pinned === e ? null : e;
        e.classList.toggle("pinned", pinned === e);
        focus(attr, idx, pinned === e);
      });
      return e;
    };
    ql.forEach((q, i) => pic.append(token(XL, TOP + ROW * i, q, "end", "q", i)));
    kl.forEach((k, j) => pic.append(token(XR, TOP + ROW * j, k, "start", "k", j)));
    // Heads: each in its colour, every one on (the first alone past ALL_HEADS_UP_TO tokens);
    // each button toggles one, "all" and "none" every one.
    const oneHead = nh > 1 && Math.max(tq, t) > ALL_HEADS_UP_TO;
    const heads = el("div", { class: "heads" }, "Heads: ");
    const setAll = (on) => groups.forEach((g, h) => {
      show(h, on);
      heads.querySelector(`button[data-head="${h}"]`).setAttribute("aria-pressed", String(on));
    });
    groups.forEach((g, h) => {
      const on = !oneHead || h === 0;
      show(h, on);
      const b = el("button", { type: "button", "aria-pressed": String(on), style: `border-color: ${headColour(h, nh)}`,
                               "data-head": h }, step.labels[0][h]);
      b.addEventListener("click", () => {
        const now = b.getAttribute("aria-pressed") !== "true";
        b.setAttribute("aria-pressed", String(now));
        show(h, now);
      });
      heads.append(b);
    });
    if (nh > 1)
      heads.append(el("button", { type: "button", class: "all", onclick: () => setAll(true) }, "all"),
                   el("button", { type: "button", class: "none", onclick: () => setAll(false) }, "none"));
    // the model view opens one head: that head alone on
    view.selectOnly = (only) => groups.forEach((g, h) => {
      show(h, h === only);
      heads.querySelector(`button[data-head="${h}"]`).setAttribute("aria-pressed", String(h === only));
    });
    if (oneHead)
      view.append(el("p", { class: "note one-head" }, `${Math.max(tq, t)} tokens: ${step.labels[0][0]} alone is on at first, ` +
        `as ${nh} heads' lines at once are too many to follow; click a head (or "all") to add it.`));
    view.append(heads, pic);
    return view;
  }

  // ---- which query heads share each K/V head (GQA, MQA; one each in MHA)
  function kvGroups(step) {
    const groups = new Map();
    step.values.forEach((g, h) => groups.set(g, [...(groups.get(g) || []), step.labels[0][h]]));
    return el("table", { class: "matrix kv-groups" },
      el("thead", {}, el("tr", {}, el("th", {}, "K/V head"), el("th", {}, "read by query heads"))),
      el("tbody", {}, [...groups].map(([g, hs]) => el("tr", {}, el("th", {}, `kv${g}`), el("td", {}, hs.join(" "))))));
  }

  // ---- one step
  function stepSection(step, index, count, trace, steps) {
    const sec = el("section", { class: "step", id: `step-${step.name}`, "data-step": step.name },
      el("h2", {}, el("span", { class: "num" }, `${index + 1}/${count}`), el("code", {}, step.name), step.title ? ` — ${step.title}` : ""));
    if (step.formula) sec.append(el("div", { class: "formula" }, step.formula));
    const shape = `[${step.shape.join("×")}${step.axes.length ? ": " + step.axes.join(" × ") : ""}]`;
    sec.append(el("p", { class: "shape" }, `shape ${shape} · `, el("span", { class: "badge" }, step.source),
      step.rounded_to !== undefined ? ` · rounded to ${step.rounded_to} decimals` : "",
      step.inputs && step.inputs.length ? ` · from ${step.inputs.join(", ")}` : ""));
    if (step.note) sec.append(el("p", { class: "note" }, withCode(step.note)));
    if (step.pooled) sec.append(pooledNote(step));
    const isPattern = step.name.endsWith("hook_pattern") && !trace.diff;
    // two traces compared: |A − B| on the page's one scale, equal and within-tolerance cells apart
    const diffOpts = trace.diff ? { diff: { beyond: step.beyond || null } } : {};
    if (trace.diff && trace.diff.first_divergence === step.name)
      sec.classList.add("first-divergence"), sec.querySelector("h2").append(el("span", { class: "badge diverges" }, "first divergence"));
    if (step.summary) {
      const m = step.summary;
      const f = numberFormat([m.min, m.max, m.mean]);
      sec.append(el("p", { class: "note" }, `summary only: min ${f.text(m.min)}, max ${f.text(m.max)}, mean ${f.text(m.mean)}` +
        (m.neg_inf ? `, ${m.neg_inf} cells −inf` : "")));
    } else if (step.values !== null && step.values !== undefined) {
      for (const b of sequences(trace)) {  // a batch: one table per sequence, with its tokens
        const s = b === null ? step : seqStep(step, b, trace);
        if (b !== null) sec.append(el("p", { class: "slice-caption" }, `sequence b${b}: ${trace.batch.sequences[b].join(" ")}`));
        const masked = isPattern ? maskTest(trace, b === null ? steps : seqSteps(trace, b), attentionOf(step.name)) : null;
        sec.append(matrixWithToggle(s, s.values, isPattern ? { heat: true, masked, kvOf: kvOf(steps, attentionOf(step.name)) } : diffOpts));
        if (s.formula_values)
          sec.append(el("details", {}, el("summary", {}, "what the formula gives (the lesson replaces it with the values above)"),
                        matrixWithToggle(s, s.formula_values, {})));
      }
    }
    if (step.name.endsWith("hook_kv_head") && Array.isArray(step.values)) sec.append(kvGroups(seqStep(step, 0, trace)));
    if (step.explain) sec.append(el("p", { class: "explain" }, step.explain));
    const mine = trace.claims.filter((c) => c.step === step.name);
    if (mine.length)
      sec.append(el("ul", { class: "step-claims" }, mine.map((c) => el("li", {},
        el("a", { href: `#claim-${c.id}`, class: `v-${c.verdict}` }, `${MARK[c.verdict] || ""} claim ${c.id}: ${c.verdict}`)))));
    if (isPattern && step.values && step.shape.length === (trace.batch ? 4 : 3))
      sec.append(el("p", { class: "note" },
                    el("a", { href: `#${attentionId(step.name, trace.batch ? 0 : null)}` }, "the head view of these weights")));
    return sec;
  }

  // A step the page keeps pooled (report_page.hpp): what each cell is.
  function pooledNote(step) {
    const p = step.pooled;
    return el("p", { class: "note pooled" }, `Pooled for this page: each cell is the ${p.op} of a ${p.block.join(" × ")} ` +
      `block of the trace's [${p.from_shape.join("×")}] values (labels name a block's first and last token).`);
  }

  // ---- attention at a glance: heatmaps per head (masked cells hatched) beside the head view,
  // for every attention of every block (self and cross), each with its own mask
  const attentionId = (name, b) => `attention-${attentionOf(name).replace(/\.$/, "")}${b === null ? "" : `-b${b}`}`;
  function attentionSection(step, trace, steps, b = null) {
    const prefix = attentionOf(step.name), masked = maskTest(trace, steps, prefix);
    return el("section", { class: "attention", id: attentionId(step.name, b), "data-attention": prefix },
      el("h2", {}, isCross(prefix) ? "Cross-attention " : "Attention ", el("code", {}, step.name),
         b === null ? "" : ` — sequence b${b}: ${trace.batch.sequences[b].join(" ")}`),
      step.pooled ? pooledNote(step) : null,
      el("p", { class: "note" }, "One heatmap per head: row = query, column = key, the darker the more the query reads " +
        "from the key; hover a cell for its exact value. " +
        (isCross(prefix) ? "Cross-attention: each decoder token reads every memory token; nothing is masked."
                         : "Masked cells (−inf before softmax, 0 after) are hatched in tables, a grey checker on canvases.")),
      el("div", { class: "panels" },
         el("div", {}, el("h3", {}, "Heatmaps"), matrixWithToggle(step, step.values, { heat: true, masked, kvOf: kvOf(steps, prefix) })),
         headView(step, masked)));
  }

