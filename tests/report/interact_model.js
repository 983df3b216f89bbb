// Injected by run_report_test.sh after the report's own script, in a copy of
// a page with a model view: clicks the last head of the last attention and
// checks that its head view opened with that head alone selected. Writes the
// outcome to <body data-model-click>: "ok" or what failed.
(function () {
  "use strict";
  const failed = [];
  const expect = (ok, what) => { if (!ok) failed.push(what); };
  const thumbs = [...document.querySelectorAll("section.model-view button.thumb")];
  expect(thumbs.length > 0, "the model view has thumbnails");
  const thumb = thumbs[thumbs.length - 1];
  if (thumb) {
    const prefix = thumb.dataset.attention, head = thumb.dataset.head;
    thumb.click();
    const id = `attention-${prefix.replace(/\.$/, "")}`;
    const sec = document.getElementById(id);
    expect(sec !== null, `a section ${id}`);
    expect(location.hash === `#${id}`, `the page went to #${id} (at ${location.hash})`);
    if (sec) {
      expect(sec.dataset.selectedHead === head, `head ${head} selected (${sec.dataset.selectedHead})`);
      const pressed = [...sec.querySelectorAll(".headview .heads button[data-head]")]
        .filter((b) => b.getAttribute("aria-pressed") === "true").map((b) => b.dataset.head);
      expect(pressed.length === 1 && pressed[0] === head, `only head ${head} on in the head view (on: ${pressed.join(" ")})`);
      const shownGroups = [...sec.querySelectorAll(".headview svg g[data-head]")].filter((g) => g.style.display !== "none");
      expect(shownGroups.length === 1 && shownGroups[0].dataset.head === head, "only that head's lines drawn");
      const marked = sec.querySelector(".slice.selected");
      expect(marked && marked.dataset.slice === head, "its heatmap marked");
    }
    document.body.dataset.clicked = `${prefix}${head}`;
  }
  // A canvas heatmap (above 32 tokens): its axes, hover naming a cell, "+" zooming in.
  const map = document.querySelector("section.attention .canvas-map");
  if (map) {
    const c = map.querySelector("canvas"), readout = map.querySelector(".readout");
    map.querySelector('button[title="whole matrix"]').click();  // a canvas not yet seen is painted now, at 1×
    expect(c.dataset.masked !== undefined, "the canvas is painted once it is drawn");
    // the map's own rectangle inside the canvas (the axes are around it), in the canvas's CSS pixels
    const [ML, MT, W, H] = c.dataset.plot.split(" ").map(Number), rows = Number(c.dataset.rows), cols = Number(c.dataset.cols);
    const css = c.getBoundingClientRect(), k = css.width / parseFloat(c.style.width), dpr = c.width / parseFloat(c.style.width);
    // ink: a pixel darker than the page's white in a box of the canvas (CSS pixels), read back
    // once per state (the canvas's pixels, not what the page says it drew)
    let px = null;
    const read = () => {  // through a copy on a canvas made for reading (Chromium warns of readbacks otherwise)
      const copy = document.createElement("canvas");
      copy.width = c.width, copy.height = c.height;
      const cc = copy.getContext("2d", { willReadFrequently: true });
      cc.drawImage(c, 0, 0);
      px = cc.getImageData(0, 0, c.width, c.height).data;
    };
    const inked = (x, y, w, h) => {
      const x0 = Math.max(0, Math.round(x * dpr)), y0 = Math.max(0, Math.round(y * dpr));
      const x1 = Math.min(c.width, Math.round((x + w) * dpr)), y1 = Math.min(c.height, Math.round((y + h) * dpr));
      for (let yy = y0; yy < y1; ++yy)
        for (let xx = x0; xx < x1; ++xx) {
          const i = 4 * (yy * c.width + xx);
          if (px[i] + px[i + 1] + px[i + 2] < 3 * 200) return true;
        }
      return false;
    };
    read();
    // Each axis at 1×: the cells are too small for a label each, so positions every k tokens,
    // from 0 over the whole axis, each number drawn beside the map where its token is.
    const axis = (name, n) => {
      const kind = c.dataset[`${name}Axis`], marks = (c.dataset[`${name}Marks`] || "").split(" ").map(Number);
      return { kind, marks, step: marks.length > 1 ? marks[1] - marks[0] : 0, n };
    };
    for (const [name, n, len] of [["row", rows, H], ["col", cols, W]]) {
      const a = axis(name, n);
      expect(a.kind === "positions", `${name} axis at 1×: positions (${a.kind})`);
      expect(a.marks[0] === 0 && a.step > 0 && a.marks.every((m, i) => m === i * a.step) && a.marks[a.marks.length - 1] + a.step >= n,
             `${name} axis: every ${a.step} tokens from 0 to ${n} (${a.marks.join(" ")})`);
      const px = len / n;
      for (const m of a.marks) {
        const at = (m + 0.5) * px;  // the token's centre along the map
        const ink = name === "row" ? inked(2, MT + at - 3, ML - 4, 6) : inked(ML + at - 4, MT - 20, 8, 20);
        expect(ink, `${name} position ${m} drawn beside the map`);
      }
    }
    // upper right: a cell above the diagonal, masked in a causal self-attention
    c.dispatchEvent(new MouseEvent("mousemove", { clientX: css.left + (ML + 0.75 * W) * k, clientY: css.top + (MT + 0.25 * H) * k }));
    const causal = !map.closest("section").dataset.attention.includes("cross_attn");
    expect(/ → .*: /.test(readout.textContent), `hover names the cell (${readout.textContent})`);
    if (causal) expect(readout.textContent.includes("(masked)"), `a cell above the diagonal is masked (${readout.textContent})`);
    map.querySelector('button[title="zoom in"]').click();
    expect(map.querySelector(".zoom").textContent === "2.0×", "+ zooms in");
    // zoomed in until a cell is 12 px or more: each row and column named by its token
    const zoom = () => parseFloat(map.querySelector(".zoom").textContent);
    for (let n = 0; n < 8 && Math.min(H / rows, W / cols) * zoom() < 12; ++n) map.querySelector('button[title="zoom in"]').click();
    for (const [name, n] of [["row", rows], ["col", cols]]) {
      const a = axis(name, n);
      expect(a.kind === "tokens" && a.step === 1 && a.marks.length >= 2, `${name} axis zoomed in: a token per cell (${a.kind}: ${a.marks.join(" ")})`);
    }
    read();
    expect(inked(2, MT, ML - 4, H) && inked(ML, 0, W, MT), "the zoomed axes' tokens are drawn");
    document.body.dataset.axes = ["row", "col"].map((n) => `${n} ${c.dataset[`${n}Axis`]} ${c.dataset[`${n}Marks`]}`).join("; ");
  }
  document.body.dataset.modelClick = failed.length ? failed.join("; ") : "ok";
})();
