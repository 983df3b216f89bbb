// Injected by run_report_test.sh into a copy of a model run's page: moves the
// next-token section's temperature slider and writes the outcome to
// <body data-interactions>: "ok" or what failed.
(function () {
  "use strict";
  const failed = [];
  const expect = (ok, what) => { if (!ok) failed.push(what); };
  const slider = document.querySelector(".temperature input[type=range]");
  const table = document.querySelector("table.next-tokens-temperature tbody");
  const run = document.querySelector("table.next-tokens tbody");
  expect(slider && table && run, "a slider and its table under the next-token table");
  if (slider && table && run) {
    const p = (body, col) => [...body.querySelectorAll("tr")].map((tr) => tr.children[col].textContent);
    // At T = 1: the run's own tokens in the run's order, their p as the run computed them (4 decimals).
    expect(p(table, 2).join() === p(run, 2).join(), "T = 1 ranks the run's tokens");
    expect(p(table, 3).map(Number).every((v, i) => Math.abs(v - Number(p(run, 4)[i])) <= 1e-4), "T = 1 gives the run's p");
    slider.value = "0";
    slider.dispatchEvent(new Event("input"));
    expect(p(table, 3)[0] === "1.0000" && p(table, 2)[0] === p(run, 2)[0], "T = 0 puts all the mass on the argmax");
    slider.value = "2";
    slider.dispatchEvent(new Event("input"));
    const top = Number(p(table, 3)[0]);
    expect(top > 0 && top < Number(p(run, 4)[0]), "T = 2 flattens the distribution");
  }
  document.body.dataset.interactions = failed.length ? failed.join("; ") : "ok";
})();
