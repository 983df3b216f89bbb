// Injected by run_report_test.sh after the report's own script, in a copy of
// a page: paints every canvas the page keeps for when it is scrolled to, as
// printing does (the page's "beforeprint"), so that the DOM dump holds each
// canvas's painted state (its masked cells counted, its axes' marks). Writes
// <body data-painted="N of M">: the heatmap canvases painted, of all.
(function () {
  "use strict";
  window.dispatchEvent(new Event("beforeprint"));
  const maps = [...document.querySelectorAll("canvas.heatmap")];
  document.body.dataset.painted = `${maps.filter((c) => c.dataset.masked !== undefined).length} of ${maps.length}`;
})();
