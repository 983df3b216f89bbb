  // attntrace report: a matrix too large for a table (more than CANVAS_ABOVE
  // rows or columns) drawn on a <canvas>, one pixel per cell scaled up: hover
  // a cell for its row and column tokens and its value, wheel or +/− to zoom,
  // drag to pan. Masked cells are a grey checker, distinct from any value.

  const CANVAS_ABOVE = 32;  // a table stays readable up to about 32 rows and columns
  const useCanvas = (rows, cols) => rows > CANVAS_ABOVE || cols > CANVAS_ABOVE;
  const MASKED_RGB = [[201, 206, 214], [226, 229, 234]];  // checker of masked cells, by (i + j) parity
  const HEAT = [31, 94, 201], NEG = [207, 34, 46];          // --heat; negative values of a signed map

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
    const sorted = a.subarray(0, n).sort();
    const p = n ? sorted[Math.floor(SCALE_PERCENTILE * (n - 1))] : 0;
    return { scale: p > 0 ? p : largest, largest };
  }

  // One pixel per cell: white at 0, blue at +scale (red at -scale for a signed map).
  function cellImage(rows, cols, get, masked, scale) {
    const c = document.createElement("canvas");
    c.width = cols, c.height = rows;
    const ctx = c.getContext("2d"), img = ctx.createImageData(cols, rows), px = img.data;
    c.masked = 0;
    for (let i = 0; i < rows; ++i)
      for (let j = 0; j < cols; ++j) {
        const v = get(i, j), o = 4 * (i * cols + j);
        let rgb;
        if ((masked && masked(i, j)) || v === "-inf") rgb = MASKED_RGB[(i + j) & 1], ++c.masked;
        else if (typeof v !== "number") rgb = [255, 255, 255];
        else {
          const x = Math.max(-1, Math.min(1, scale > 0 ? v / scale : 0)), base = x < 0 ? NEG : HEAT, a = Math.abs(x);
          rgb = base.map((b) => Math.round(255 + (b - 255) * a));
        }
        px[o] = rgb[0], px[o + 1] = rgb[1], px[o + 2] = rgb[2], px[o + 3] = 255;
      }
    ctx.putImageData(img, 0, 0);
    return c;
  }

  // o: { rows, cols, get(i, j), rowLabels, colLabels, name, masked(i, j), signed, scale, where(i, j) }
  // The colour scale is o.scale, else the slice's largest |value| (said in the caption).
  function canvasHeatmap(o) {
    const { rows, cols, get } = o;
    const auto = o.scale ? null : colourScale(rows, cols, get), scale = o.scale || auto.scale;
    const image = cellImage(rows, cols, get, o.masked, scale);
    const W = Math.min(512, Math.max(256, cols * 4)), H = Math.round(Math.min(512, Math.max(64, (W * rows) / cols)));
    const canvas = el("canvas", { width: W, height: H, class: "heatmap", "data-rows": rows, "data-cols": cols, "data-masked": image.masked,
                                  role: "img", "aria-label": `${o.name}: ${rows} × ${cols} heatmap` });
    const readout = el("span", { class: "readout" }, "hover a cell");
    const view = { z: 1, x: 0, y: 0 };  // zoom, and the cell (fractional) at the canvas's top-left corner
    const ctx = canvas.getContext("2d");
    const clamp = () => {
      view.z = Math.max(1, Math.min(view.z, Math.max(cols, rows) / 4));
      view.x = Math.max(0, Math.min(view.x, cols - cols / view.z));
      view.y = Math.max(0, Math.min(view.y, rows - rows / view.z));
    };
    const draw = () => {
      clamp();
      ctx.imageSmoothingEnabled = false;
      ctx.clearRect(0, 0, W, H);
      ctx.drawImage(image, view.x, view.y, cols / view.z, rows / view.z, 0, 0, W, H);
      zoomText.textContent = `${view.z.toFixed(view.z < 10 ? 1 : 0)}×`;
    };
    // the cell under a mouse event, from the canvas's shown size (CSS may shrink it)
    const cellAt = (e) => {
      const r = canvas.getBoundingClientRect();
      const fx = (e.clientX - r.left) / r.width, fy = (e.clientY - r.top) / r.height;
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
      zoomAt(e.deltaY < 0 ? 1.25 : 0.8, c.fx, c.fy);
    }, { passive: false });
    canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }; });
    window.addEventListener("mouseup", () => { drag = null; });
    canvas.addEventListener("mousemove", (e) => {
      if (drag) {
        const r = canvas.getBoundingClientRect();
        view.x = drag.vx - ((e.clientX - drag.x) / r.width) * (cols / view.z);
        view.y = drag.vy - ((e.clientY - drag.y) / r.height) * (rows / view.z);
        draw();
      }
      const { i, j } = cellAt(e);
      if (i < 0 || j < 0 || i >= rows || j >= cols) return;
      const v = get(i, j), m = (o.masked && o.masked(i, j)) || v === "-inf";
      readout.textContent = `${o.rowLabels[i]} → ${o.colLabels[j]}: ${exact(v)}${m ? " (masked)" : ""}`;
      canvas.title = `${o.name}[${o.where ? o.where(i, j) : `${i}, ${j}`}] = ${exact(v)}`;
    });
    canvas.addEventListener("mouseleave", () => { readout.textContent = "hover a cell"; });
    const zoomText = el("span", { class: "zoom" });
    const tools = el("div", { class: "map-tools" },
      el("button", { type: "button", title: "zoom in", onclick: () => zoomAt(2) }, "+"),
      el("button", { type: "button", title: "zoom out", onclick: () => zoomAt(0.5) }, "−"),
      el("button", { type: "button", title: "whole matrix", onclick: () => { view.z = 1; draw(); } }, "1×"),
      zoomText, readout);
    draw();
    const legend = o.signed
      ? `blue +${fmt(scale)}, red −${fmt(scale)}, white 0`
      : `white 0, darkest ≥ ${fmt(scale)}`;
    const range = auto ? ` (99th percentile of |value|; largest ${fmt(auto.largest)})` : "";
    return el("div", { class: "canvas-map" }, tools, canvas,
              el("p", { class: "map-legend" }, `${rows} × ${cols} cells · ${legend}${range}` +
                 (image.masked ? ` · grey checker: masked (${image.masked} cells)` : "") + " · wheel or +/− to zoom, drag to pan"));
  }
