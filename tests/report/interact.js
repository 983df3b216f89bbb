// Injected by run_report_test.sh after the report's own script, in a copy of
// a page: drives what a reader does (show all, hover a token, toggle a head)
// and writes the outcome to <body data-interactions>: "ok" or what failed.
(function () {
  "use strict";
  const failed = [];
  const expect = (ok, what) => { if (!ok) failed.push(what); };
  // "show all" on the first elided matrix draws more cells, "show fewer" fewer again.
  const button = [...document.querySelectorAll("section.step button")].find((b) => b.textContent.startsWith("show all"));
  if (button) {
    const block = button.parentElement, before = block.querySelectorAll("td").length;
    button.click();
    const all = block.querySelectorAll("td").length;
    expect(all > before, "show all draws more cells");
    block.querySelector("button").click();
    expect(block.querySelectorAll("td").length === before, "show fewer draws the elided matrix again");
  }
  // Hovering the first query token leaves only its lines visible.
  const view = document.querySelector(".headview svg");
  if (view) {
    const token = view.querySelector("text");
    token.dispatchEvent(new MouseEvent("mouseenter"));
    const on = [...view.querySelectorAll("line.on")];
    expect(view.classList.contains("focus") && on.length > 0, "hover a token highlights its lines");
    expect(on.every((l) => l.dataset.q === "0"), "only the hovered query's lines are highlighted");
    token.dispatchEvent(new MouseEvent("mouseleave"));
    expect(!view.classList.contains("focus"), "leaving the token shows every line again");
    // A head's button hides and shows its lines.
    const head = document.querySelector(".headview .heads button");
    const group = view.querySelector(`g[data-head="${head.dataset.head}"]`);
    const shown = head.getAttribute("aria-pressed") === "true";
    head.click();
    expect((group.style.display === "none") === shown, "a head button toggles its lines");
  }
  // Heatmap cells carry their exact value on hover.
  const cell = document.querySelector("section.attention table.heat td");
  if (cell) expect(/ = -?[0-9]/.test(cell.title) || /masked/.test(cell.title), "heatmap cells have their value as a title");
  document.body.dataset.interactions = failed.length ? failed.join("; ") : "ok";
})();
