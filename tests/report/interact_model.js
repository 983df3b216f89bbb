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
  // A canvas heatmap (above 32 tokens): hovering a cell names it, "+" zooms in.
  const map = document.querySelector("section.attention .canvas-map");
  if (map) {
    const c = map.querySelector("canvas"), r = c.getBoundingClientRect(), readout = map.querySelector(".readout");
    // upper right: a cell above the diagonal, masked in a causal self-attention
    c.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + 0.75 * r.width, clientY: r.top + 0.25 * r.height }));
    const causal = !map.closest("section").dataset.attention.includes("cross_attn");
    expect(/ → .*: /.test(readout.textContent), `hover names the cell (${readout.textContent})`);
    if (causal) expect(readout.textContent.includes("(masked)"), `a cell above the diagonal is masked (${readout.textContent})`);
    map.querySelector('button[title="zoom in"]').click();
    expect(map.querySelector(".zoom").textContent === "2.0×", "+ zooms in");
  }
  document.body.dataset.modelClick = failed.length ? failed.join("; ") : "ok";
})();
