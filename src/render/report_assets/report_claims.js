  // attntrace report: the claims, as a table at the end of the page (what the
  // article prints, what we compute, the verdict, the article's words) and as
  // numbers written the way the article writes them.

  // ---- claims: numbers as rows, one line per row of the first axis longer than 1
  function flat(x, out = []) {
    if (Array.isArray(x)) x.forEach((y) => flat(y, out));
    else out.push(x);
    return out;
  }
  // p: decimals for every number, or (v, k) => the text of the k-th number
  function numbers(values, p) {
    const text = typeof p === "function" ? p : (v) => fmt(v, p);
    while (Array.isArray(values) && values.length === 1 && Array.isArray(values[0])) values = values[0];
    const rows = Array.isArray(values) && Array.isArray(values[0]) ? values : [values];
    let k = 0;
    return rows.map((r) => flat(r).map((v) => text(v, k++)).join(" ")).join("\n");
  }
  // A terms claim's values (the terms, then their sum) as the article adds them: "0.99 + 0.63 = 1.62"
  function asSum(values, p) {
    const text = typeof p === "function" ? p : (v) => fmt(v, p);
    const shown = values.map((v, k) => text(v, k));
    return `${shown.slice(0, -1).join(" + ")} = ${shown[shown.length - 1]}`;
  }
  // A claim's precision: "decimals" or "sig", one number or one per printed number (shaped as printed)
  function digitsOf(c) {
    const d = c.sig !== undefined ? c.sig : c.decimals;
    return { sig: c.sig !== undefined, each: Array.isArray(d) ? flat(d) : null, most: Array.isArray(d) ? Math.max(...flat(d)) : d || 0 };
  }
  // n significant figures as C's %g chooses: scientific below 1e-4 or from 10^n (6.1441e-6, 0.250)
  function sigText(v, n) {
    if (typeof v !== "number") return fmt(v);
    const e = v === 0 ? 0 : Math.floor(Math.log10(Math.abs(v)));
    return e < -4 || e >= n ? v.toExponential(n - 1) : v.toPrecision(n);
  }
  function asPrinted(c) {
    const d = digitsOf(c);
    return (v, k) => {
      const n = d.each ? d.each[k] : d.most;
      return d.sig ? sigText(v, n) : fmt(v, n);
    };
  }
  // "row sums", "column maxima", "the region's mean": a claim's reduction (of) in words
  const REDUCED = { sum: "sums", min: "minima", max: "maxima", mean: "means", std: "standard deviations",
                    std_unbiased: "standard deviations (÷ n - 1)" };
  const REDUCED_ONE = { sum: "sum", min: "minimum", max: "maximum", mean: "mean", std: "standard deviation",
                        std_unbiased: "standard deviation (÷ n - 1)" };
  function reducedWords(of) {
    const over = of.slice(0, of.indexOf("_")), op = of.slice(of.indexOf("_") + 1);
    if (over === "all") return `the region's ${REDUCED_ONE[op] || op}`;
    return `${over === "col" ? "column" : "row"} ${REDUCED[op] || op}`;
  }
  // A next-token claim's token: its piece from the logits' vocab labels, else its id.
  function vocabLabel(claim, steps) {
    const step = steps.get(claim.step);
    const vocab = step ? step.axes.indexOf("vocab") : -1;
    return vocab >= 0 && step.labels[vocab] ? `'${step.labels[vocab][claim.token]}'` : `#${claim.token}`;
  }
  function where(claim, steps) {
    const step = steps.get(claim.step);
    return Object.entries(claim.at || {}).map(([axis, i]) => {
      const a = step ? step.axes.indexOf(axis) : -1;
      const label = (j) => (a >= 0 && step.labels[a] ? step.labels[a][j] : j);
      return Array.isArray(i) ? `${axis} [${i.map(label).join(" ")}]` : `${axis} ${label(i)}`;
    }).join(", ");
  }
  function verdictCell(c) {
    return el("td", { class: `verdict v-${c.verdict}` }, `${MARK[c.verdict] || ""} ${c.verdict}`,
      c.expected && c.expected !== c.verdict ? el("div", { class: "unexpected" }, `lesson expects ${c.expected}`) : null);
  }

  function claimsSection(trace, steps) {
    const sec = el("section", { class: "claims", id: "claims" }, el("h2", {}, `Claims (${trace.claims.length})`));
    if (!trace.claims.length) {
      sec.append(el("p", { class: "muted" }, "This lesson checks no printed number."));
      return sec;
    }
    const rows = trace.claims.map((c) => {
      let printed, computed;
      const lines = (values, p) => el("div", { class: "rows" }, c.of === "terms" ? asSum(values, p) : numbers(values, p));
      if (c.of === "shape") {
        printed = Object.entries(c.printed).map(([a, n]) => `${a} ${n}`).join(", ");
        computed = c.reason || "";
      } else {
        const d = digitsOf(c);
        // ours: two digits more than printed, one format for the claim's numbers (fixed, else scientific)
        const f = numberFormat(flat([c.computed, c.document_arithmetic === undefined ? [] : c.document_arithmetic,
                                     c.formula_only === undefined ? [] : c.formula_only]),
                               Math.max(PRECISION, d.most + 2));
        const p = d.sig ? (v) => sigText(v, Math.min(d.most + 2, 9)) : (v) => f.text(v);
        printed = [lines(c.printed, asPrinted(c)), c.of === "terms" ? el("div", { class: "muted" },
            c.printed.length && Array.isArray(c.printed[0]) ? "(the weighted value vectors, a row per key)" : "(its terms, then their sum)")
          : c.of === "next_token" ? el("div", { class: "muted" }, `(the probability that ${vocabLabel(c, steps)} comes next)`)
          : c.of === "angle" || c.of === "frequency" ? el("div", { class: "muted" }, `(the ${c.of} inside each cell's formula)`)
          : c.of !== "values" ? el("div", { class: "muted" }, `(${reducedWords(c.of)})`) : null];
        computed = c.computed === null || c.computed === undefined ? [c.reason || "not checkable"] : [lines(c.computed, p)];
        // A next token that is not the top one disagrees for the token, whatever its probability: said first.
        const wrongToken = c.of === "next_token" && c.verdict === "disagrees" && c.reason;
        if (wrongToken) computed.unshift(el("div", {}, c.reason));
        if ((c.verdict === "agrees-when-rounded" || c.verdict === "disagrees") && c.document_arithmetic)
          computed.push(el("div", { class: "muted" }, "with the article's rounding:"), lines(c.document_arithmetic, p));
        if (c.verdict === "agrees-from-given" && c.formula_only)  // what attention gives without the article's numbers
          computed.push(el("div", { class: "muted" }, "without the given values:"), lines(c.formula_only, p));
        if (typeof c.max_deviation === "number" && c.verdict !== "agrees" && !(wrongToken && c.cells_off === 0))
          computed.push(el("div", { class: "muted" }, `largest deviation ${c.max_deviation.toPrecision(4)} (${c.cells_off} cells off)`));
        else if (wrongToken)
          computed.push(el("div", { class: "muted" }, "(its probability agrees; the token is what differs)"));
      }
      const article = el("td", {}, c.quote ? el("blockquote", {}, `“${c.quote}”`) : null,
        c.note ? el("div", { class: "muted" }, withCode(c.note)) : null,
        c.basis === "given" ? el("div", { class: "muted" }, "checked against the lesson's given values: the article's consistency with itself") : null,
        c.rests_on ? el("div", { class: "muted" }, `agrees only from the article's given values: computed from ${c.rests_on}, which the lesson gives and its formula does not`) : null);
      return el("tr", { id: `claim-${c.id}`, "data-claim": c.id, "data-verdict": c.verdict },
        el("td", {}, el("b", {}, c.id)),
        el("td", {}, el("a", { href: `#step-${c.step}` }, el("code", {}, c.step.split(".").pop())), el("div", { class: "muted" }, where(c, steps))),
        el("td", { class: "numbers" }, printed), el("td", { class: "numbers" }, computed),
        verdictCell(c), article);
    });
    sec.append(el("table", { class: "claims" },
      el("caption", { class: "num-format" }, "numbers: printed as the article writes them; computed to two digits more " +
        "than printed, each claim's in one format (fixed decimals, or scientific notation when they are too small for that)"),
      el("thead", {}, el("tr", {}, ["claim", "step", "printed", "computed", "verdict", "article"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
    return sec;
  }

