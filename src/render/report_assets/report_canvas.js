  // attntrace report: a matrix too large for a table (more than CANVAS_ABOVE
  // rows or columns) drawn on a <canvas>, one pixel per cell scaled up, with
  // its axes: the row and column tokens when a cell is tall (wide) enough for
  // a label, else position ticks every k tokens. Hover a cell for its row and
  // column tokens and its value, wheel or +/− to zoom (the axes follow, and
  // the tokens appear once they fit), drag to pan. Masked cells are a grey
  // checker, distinct from any value. A canvas is painted when it comes near
  // the screen, so a page of many maps opens without painting them all.

  const CANVAS_ABOVE = 32;  // a table stays readable up to about 32 rows and columns
  const useCanvas = (rows, cols) => rows > CANVAS_ABOVE || cols > CANVAS_ABOVE;
  const MASKED_RGB = [[201, 206, 214], [226, 229, 234]];  // checker of masked cells, by (i + j) parity
  const HEAT = [31, 94, 201], NEG = [207, 34, 46];          // --heat; negative values of a signed map
  const WITHIN_RGB = [190, 229, 200], DIVERGES = [207, 34, 46];  // a diff's cells: --within, --diverges

  // A slice's colour scale: the 99th percentile of its finite |values| (the
  // largest when that is 0), so that one cell of weight 1 (a causal map's first
  // row) does not leave every other cell white; cells above it are darkest.
  const SCALE_PERCENTILE = 0.99;
  function colourScale(rows, cols, get) {
    const a = new Float64Array(rows * cols);
    let n = 0, largest = 0;
    for (let i = 0; i < rows; ++i)
      for (let j = 0; j < cols; ++j) {
        const v = get(i, j);
        if (typeof v === "number") a[n++] = Math.abs(v), largest = Math.max(largest, Math.abs(v));
      }
    const p = n ? kth(a.subarray(0, n), Math.floor(SCALE_PERCENTILE * (n - 1))) : 0;
    return { scale: p > 0 ? p : largest, largest };
  }
  // The k-th smallest of a (reordered in place): what a[k] would be sorted, in linear time
  // (a sort of a 256 × 256 map's 65,536 values took ~5 ms, a tenth of a large page's painting).
  function kth(a, k) {
    let lo = 0, hi = a.length - 1;
    while (lo < hi) {
      const pivot = a[(lo + hi) >> 1];
      let i = lo, j = hi;
      while (i <= j) {
        while (a[i] < pivot) ++i;
        while (a[j] > pivot) --j;
        if (i <= j) { const t = a[i]; a[i] = a[j], a[j] = t; ++i, --j; }
      }
      if (k <= j) hi = j;
      else if (k >= i) lo = i;
      else return a[k];
    }
    return a[k];
  }

  // white at 0, `base` at x = 1
  const shade = (base, x) => base.map((b) => Math.round(255 + (b - 255) * x));
  // A value's colour on a heat map: blue at +scale (red at -scale for a signed map).
  function heatRGB(v, scale) {
    if (typeof v !== "number") return [255, 255, 255];
    const x = Math.max(-1, Math.min(1, scale > 0 ? v / scale : 0));
    return shade(x < 0 ? NEG : HEAT, Math.abs(x));
  }
  // A diff's cell: white when equal, green within tolerance, red beyond on the page's scale.
  function diffRGB(v, beyond) {
    const kind = diffKind(v, beyond);
    return kind === "equal" ? [255, 255, 255] : kind === "within" ? WITHIN_RGB : shade(DIVERGES, diffShade(v));
  }

  // One pixel per cell; colour(v, i, j) -> [r, g, b]; masked cells and -inf a checker
  // (counted: the image's `masked`).
  function cellImage(rows, cols, get, masked, colour) {
    const c = document.createElement("canvas");
    c.width = cols, c.height = rows;
    const ctx = c.getContext("2d"), img = ctx.createImageData(cols, rows), px = img.data;
    c.masked = 0;
    for (let i = 0; i < rows; ++i)
      for (let j = 0; j < cols; ++j) {
        const v = get(i, j), o = 4 * (i * cols + j);
        let rgb;
        if ((masked && masked(i, j)) || v === "-inf") rgb = MASKED_RGB[(i + j) & 1], ++c.masked;
        else rgb = colour(v, i, j);
        px[o] = rgb[0], px[o + 1] = rgb[1], px[o + 2] = rgb[2], px[o + 3] = 255;
      }
    ctx.putImageData(img, 0, 0);
    return c;
  }

  // ---- painting when seen: `paint` runs once `node` comes within LAZY_MARGIN of
  // the screen; paintVisible() runs, at once, those already there (the first screen
  // is painted before the page's script ends).
  const LAZY_MARGIN = 600;  // px above and below the screen
  const pending = new Map();  // node -> paint
  const observer = typeof IntersectionObserver === "function"
    ? new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) paintNow(e.target);
    }, { rootMargin: `${LAZY_MARGIN}px 0px` })
    : null;
  function paintNow(node) {
    const paint = pending.get(node);
    if (!paint) return;
    pending.delete(node);
    if (observer) observer.unobserve(node);
    paint();
  }
  function whenSeen(node, paint) {
    if (!observer) return paint();
    pending.set(node, paint);
    observer.observe(node);
  }
  // Printing shows every canvas: the ones not yet seen are painted first.
  window.addEventListener("beforeprint", () => { for (const node of [...pending.keys()]) paintNow(node); });
  function paintVisible() {
    const top = -LAZY_MARGIN, bottom = window.innerHeight + LAZY_MARGIN;
    for (const node of [...pending.keys()]) {
      if (!node.isConnected) continue;
      const r = node.getBoundingClientRect();
      if (r.bottom >= top && r.top <= bottom && (r.width > 0 || r.height > 0)) paintNow(node);
    }
  }

  // ---- axes
  const AXIS_FONT = '11px ui-monospace, "DejaVu Sans Mono", monospace';
  const LABEL_MIN_PX = 12;  // a token label per row (column) once a cell is this tall (wide) on the canvas
  const TICK_MIN_PX = 30;   // position ticks at least this far apart
  const LABEL_MAX_PX = 84;  // a longer token label is cut with "…" (read upwards above the map: COL_LABEL_MAX_PX)
  const COL_LABEL_MAX_PX = 60;
  const AXIS_PAD = 6;       // px between a label and the map
  // The tick step in tokens: 1, 2, 5, 10, 20, 50, ... the first at least TICK_MIN_PX apart.
  function tickStep(pxPerToken) {
    for (let m = 1; m < 1e9; m *= 10) for (const n of [1, 2, 5]) if (n * m * pxPerToken >= TICK_MIN_PX) return n * m;
    return 1e9;
  }
  // Text widths in AXIS_FONT; a label list's widest measured once per list (every head of a
  // step shares its token labels), then cut to the axis's room.
  const measurer = document.createElement("canvas").getContext("2d");
  const textWidth = (text) => ((measurer.font = AXIS_FONT), Math.ceil(measurer.measureText(text).width));
  const widths = new WeakMap();
  function labelsWidth(labels, max) {
    if (!widths.has(labels)) {
      measurer.font = AXIS_FONT;
      let w = 0;
      for (const l of labels) w = Math.max(w, measurer.measureText(String(l)).width);
      widths.set(labels, Math.ceil(w));
    }
    return Math.min(max, widths.get(labels));
  }
  function cut(ctx, text, max) {
    text = String(text);
    if (ctx.measureText(text).width <= max) return text;
    let n = text.length;
    while (n > 1 && ctx.measureText(`${text.slice(0, n)}…`).width > max) --n;
    return `${text.slice(0, n)}…`;
  }
  // What one axis draws of the cells [start, start + span) over `len` px: token labels
  // (at cell centres) when a cell has room, else positions every k tokens (a pooled
  // cell covers `block` tokens). -> { kind: "tokens" | "positions", marks: [[offset px, text, index]] }
  function axisMarks(a, start, span, len) {
    const px = len / span, marks = [];
    if (px >= LABEL_MIN_PX) {
      for (let i = Math.max(0, Math.floor(start)); i < Math.min(a.n, Math.ceil(start + span)); ++i)
        marks.push([(i + 0.5 - start) * px, a.labels ? a.labels[i] : String(i), i]);
      return { kind: "tokens", marks };
    }
    const k = tickStep(px / a.block);
    for (let p = Math.ceil((start * a.block) / k) * k; p < Math.min(a.tokens, (start + span) * a.block); p += k)
      marks.push([((p + 0.5) / a.block - start) * px, String(p), p]);
    return { kind: "positions", marks, step: k };
  }

  // o: { rows, cols, get(i, j), rowLabels, colLabels, rowAxis, colAxis (axis names), rowBlock, colBlock
  // (tokens per cell of a pooled map), rowTokens, colTokens (tokens before pooling), name, masked(i, j), signed, diff: { beyondAt(i, j) } | null, where(i, j) }
  // The colour scale: a diff's page-wide one, else the slice's 99th percentile (said in the caption).
  function canvasHeatmap(o) {
    const { rows, cols, get } = o;
    const W = Math.min(512, Math.max(256, cols * 4)), H = Math.round(Math.min(512, Math.max(64, (W * rows) / cols)));
    const rowA = { n: rows, labels: o.rowLabels, block: o.rowBlock || 1, tokens: o.rowTokens || rows, name: o.rowAxis || "row" };
    const colA = { n: cols, labels: o.colLabels, block: o.colBlock || 1, tokens: o.colTokens || cols, name: o.colAxis || "column" };
    // margins: the widest label (cut at LABEL_MAX_PX) or position, and the axis names in the corner
    const widest = (a, max) => Math.max(textWidth(String(a.tokens)), a.labels ? labelsWidth(a.labels, max) : 0);
    const corner = [`${colA.name} →`, `${rowA.name} ↓`];
    const ML = Math.max(widest(rowA, LABEL_MAX_PX), ...corner.map(textWidth)) + 2 * AXIS_PAD;
    const MT = Math.max(widest(colA, COL_LABEL_MAX_PX) + 2 * AXIS_PAD, 34), PR = 14, PB = 8;  // PR, PB: room for the last tick's text
    const TW = ML + W + PR, TH = MT + H + PB;
    const dpr = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
    const canvas = el("canvas", { width: Math.round(TW * dpr), height: Math.round(TH * dpr), class: "heatmap",
                                  style: `width: ${TW}px`, "data-rows": rows, "data-cols": cols,
                                  "data-plot": `${ML} ${MT} ${W} ${H}`, role: "img",
                                  "aria-label": `${o.name}: ${rows} × ${cols} heatmap, ${rowA.name} by ${colA.name}` });
    const readout = el("span", { class: "readout" }, "hover a cell");
    const legend = el("p", { class: "map-legend" }, `${rows} × ${cols} cells`);
    const view = { z: 1, x: 0, y: 0 };  // zoom, and the cell (fractional) at the map's top-left corner
    const ctx = canvas.getContext("2d");
    let image = null;  // the cells, one pixel each: made when the canvas is first painted
    const clamp = () => {
      view.z = Math.max(1, Math.min(view.z, Math.max(cols, rows) / 4));
      view.x = Math.max(0, Math.min(view.x, cols - cols / view.z));
      view.y = Math.max(0, Math.min(view.y, rows - rows / view.z));
    };
    const drawAxes = () => {
      ctx.font = AXIS_FONT;
      ctx.fillStyle = "#5b6575";
      ctx.strokeStyle = "#5b6575";
      ctx.lineWidth = 1;
      // the corner: which axis is which
      ctx.textAlign = "left", ctx.textBaseline = "alphabetic";
      ctx.fillText(corner[0], 2, 12);
      ctx.fillText(corner[1], 2, 25);
      // rows: labels right-aligned left of the map, clipped to its height
      const r = axisMarks(rowA, view.y, rows / view.z, H);
      ctx.save();
      ctx.beginPath();
      ctx.rect(0, MT - 6, ML, H + 12);
      ctx.clip();
      ctx.textAlign = "right", ctx.textBaseline = "middle";
      for (const [y, text] of r.marks) {
        ctx.fillText(cut(ctx, text, ML - 2 * AXIS_PAD), ML - AXIS_PAD, MT + y);
        if (r.kind === "positions") ctx.beginPath(), ctx.moveTo(ML - 4, MT + y + 0.5), ctx.lineTo(ML, MT + y + 0.5), ctx.stroke();
      }
      ctx.restore();
      // columns: labels read upwards above the map (position numbers level), clipped to its width
      const c = axisMarks(colA, view.x, cols / view.z, W);
      ctx.save();
      ctx.beginPath();
      ctx.rect(ML - 4, 0, W + PR + 4, MT);
      ctx.clip();
      for (const [x, text] of c.marks) {
        if (c.kind === "tokens") {
          ctx.save();
          ctx.translate(ML + x, MT - AXIS_PAD);
          ctx.rotate(-Math.PI / 2);
          ctx.textAlign = "left", ctx.textBaseline = "middle";
          ctx.fillText(cut(ctx, text, MT - 2 * AXIS_PAD), 0, 0);
          ctx.restore();
        } else {
          ctx.textAlign = "center", ctx.textBaseline = "bottom";
          ctx.fillText(text, ML + x, MT - AXIS_PAD);
          ctx.beginPath(), ctx.moveTo(ML + x + 0.5, MT - 4), ctx.lineTo(ML + x + 0.5, MT), ctx.stroke();
        }
      }
      ctx.restore();
      // what each axis shows, for a reader of the DOM (the report test)
      const record = (a, k) => { canvas.dataset[`${k}Axis`] = a.kind; canvas.dataset[`${k}Marks`] = a.marks.map((x) => x[2]).join(" "); };
      record(r, "row"), record(c, "col");
    };
    const draw = () => {
      if (!image) return paintNow(canvas);  // zoomed or reset before it was seen: painted now (paint draws)
      clamp();
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, TW, TH);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(image, view.x, view.y, cols / view.z, rows / view.z, ML, MT, W, H);
      ctx.strokeStyle = "#d8dde5";
      ctx.strokeRect(ML - 0.5, MT - 0.5, W + 1, H + 1);
      drawAxes();
      zoomText.textContent = `${view.z.toFixed(view.z < 10 ? 1 : 0)}×`;
    };
    const paint = () => {
      let words;
      if (o.diff) {
        const beyondAt = o.diff.beyondAt;
        image = cellImage(rows, cols, get, o.masked, (v, i, j) => diffRGB(v, beyondAt ? beyondAt(i, j) : null));
        words = `white: equal · green: within tolerance · red: beyond it, pale at ${fmt(diffScale.lo)} to dark at ` +
                `${fmt(diffScale.hi)} (logarithmic, one scale for every step)`;
      } else {
        const auto = colourScale(rows, cols, get), scale = auto.scale;
        image = cellImage(rows, cols, get, o.masked, (v) => heatRGB(v, scale));
        words = (o.signed ? `blue +${fmt(scale)}, red −${fmt(scale)}, white 0` : `white 0, darkest ≥ ${fmt(scale)}`) +
                ` (99th percentile of |value|; largest ${fmt(auto.largest)})`;
      }
      const masked = image.masked;
      canvas.dataset.masked = masked;  // cells the mask blocks (the report test reads them)
      legend.textContent = `${rows} × ${cols} cells · ${words}` + (masked ? ` · grey checker: masked (${masked} cells)` : "") +
        " · wheel or +/− to zoom, drag to pan";
      draw();
    };
    // the cell under a mouse event, from the canvas's shown size (CSS may shrink it)
    const cellAt = (e) => {
      const r = canvas.getBoundingClientRect(), k = r.width / TW;
      const fx = (e.clientX - r.left - ML * k) / (W * k), fy = (e.clientY - r.top - MT * k) / (H * k);
      return { i: Math.floor(view.y + (fy * rows) / view.z), j: Math.floor(view.x + (fx * cols) / view.z), fx, fy };
    };
    const zoomAt = (factor, fx = 0.5, fy = 0.5) => {
      const cx = view.x + (fx * cols) / view.z, cy = view.y + (fy * rows) / view.z;  // stays under the pointer
      view.z *= factor;
      clamp();
      view.x = cx - (fx * cols) / view.z, view.y = cy - (fy * rows) / view.z;
      draw();
    };
    let drag = null;
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const c = cellAt(e);
      zoomAt(e.deltaY < 0 ? 1.25 : 0.8, Math.max(0, Math.min(1, c.fx)), Math.max(0, Math.min(1, c.fy)));
    }, { passive: false });
    canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }; });
    window.addEventListener("mouseup", () => { drag = null; });
    canvas.addEventListener("mousemove", (e) => {
      if (drag) {
        const r = canvas.getBoundingClientRect(), k = r.width / TW;
        view.x = drag.vx - ((e.clientX - drag.x) / (W * k)) * (cols / view.z);
        view.y = drag.vy - ((e.clientY - drag.y) / (H * k)) * (rows / view.z);
        draw();
      }
      const { i, j } = cellAt(e);
      if (i < 0 || j < 0 || i >= rows || j >= cols) return;
      const v = get(i, j), isMasked = (o.masked && o.masked(i, j)) || v === "-inf";
      const kind = o.diff ? ` (${DIFF_WORDS[diffKind(v, o.diff.beyondAt ? o.diff.beyondAt(i, j) : null)]})` : "";
      readout.textContent = `${o.rowLabels[i]} → ${o.colLabels[j]}: ${exact(v)}${isMasked ? " (masked)" : ""}${kind}`;
      canvas.title = `${o.name}[${o.where ? o.where(i, j) : `${i}, ${j}`}] = ${exact(v)}`;
    });
    canvas.addEventListener("mouseleave", () => { readout.textContent = "hover a cell"; });
    const zoomText = el("span", { class: "zoom" }, "1.0×");
    const tools = el("div", { class: "map-tools" },
      el("button", { type: "button", title: "zoom in", onclick: () => zoomAt(2) }, "+"),
      el("button", { type: "button", title: "zoom out", onclick: () => zoomAt(0.5) }, "−"),
      el("button", { type: "button", title: "whole matrix", onclick: () => { view.z = 1; draw(); } }, "1×"),
      zoomText, readout);
    whenSeen(canvas, paint);
    return el("div", { class: "canvas-map" }, tools, canvas, legend);
  }
