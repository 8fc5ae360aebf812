// concord dashboard: progress polling, agreement table, sortable and
// searchable tables (consensus ranking, consensus classes). Plain
// JavaScript, no external resources.
(function () {
  "use strict";
  var csrf = document.body.getAttribute("data-csrf") || "";

  // setWidths sizes bars from their data-w percentages, at once (the
  // progress bar's transition is for live updates).
  function setWidths(root) {
    (root || document).querySelectorAll("[data-w]").forEach(function (el) {
      el.classList.add("instant");
      el.style.width = Math.max(0, Math.min(100, parseFloat(el.getAttribute("data-w")) || 0)) + "%";
      void el.offsetWidth;
      el.classList.remove("instant");
    });
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) { throw new Error((body && body.error && body.error.message) || ("HTTP " + r.status)); }
        return body;
      });
    });
  }

  // getJobJSON is getJSON for routes whose work may run as a background
  // job (the agreement routes of large projects): while they answer 202 it
  // calls pending with the job's state and asks again after Retry-After
  // seconds, until stopped (optional) says to stop.
  function getJobJSON(url, pending, stopped) {
    return new Promise(function (resolve, reject) {
      function ask() {
        if (stopped && stopped()) { reject(new Error("cancelled")); return; }
        fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
          return r.json().then(function (body) {
            if (r.status === 202) {
              if (stopped && stopped()) { reject(new Error("cancelled")); return; }
              if (pending) { pending(body); }
              var wait = parseInt(r.headers.get("Retry-After"), 10) || body.retry_after_seconds || 2;
              setTimeout(ask, wait * 1000);
              return;
            }
            if (!r.ok) { throw new Error((body && body.error && body.error.message) || ("HTTP " + r.status)); }
            resolve(body);
          });
        }).catch(reject);
      }
      ask();
    });
  }

  function fmtDur(sec) {
    sec = Math.round(sec);
    if (sec < 60) { return sec + " s"; }
    var m = Math.floor(sec / 60), s = sec % 60;
    if (m < 60) { return m + " min " + s + " s"; }
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  // Fit page: poll the fit until it ends, then reload to show the results.
  function pollFit(box) {
    var id = box.getAttribute("data-fit");
    var state = box.getAttribute("data-state");
    if (state !== "queued" && state !== "running") { return; }
    var fill = document.getElementById("progress-fill");
    var text = document.getElementById("progress-text");
    var bar = document.getElementById("progress");
    var stateEl = document.getElementById("fit-state");
    var detail = document.getElementById("progress-detail");
    function tick() {
      getJSON("/api/v1/fits/" + id).then(function (f) {
        var pct = Math.round(100 * (f.progress || 0));
        fill.style.width = pct + "%";
        bar.setAttribute("aria-valuenow", String(pct));
        text.textContent = pct + "%";
        stateEl.textContent = f.state;
        stateEl.className = "state state-" + f.state;
        box.setAttribute("data-state", f.state);
        var parts = [];
        if (f.message) { parts.push(f.message); }
        if (f.state === "running" && f.eta_seconds) { parts.push("about " + fmtDur(f.eta_seconds) + " left"); }
        if (f.state === "running" && f.max_rhat) { parts.push("max R-hat " + f.max_rhat.toFixed(3)); }
        detail.textContent = parts.join(", ");
        if (f.state === "queued" || f.state === "running") {
          setTimeout(tick, 500);
        } else {
          setTimeout(function () { window.location.reload(); }, 300);
        }
      }).catch(function (e) {
        detail.textContent = "Progress unavailable: " + e.message + " (retrying)";
        setTimeout(tick, 2000);
      });
    }
    setTimeout(tick, 300);
  }

  // Project page: keep the fits table's states fresh while fits run.
  function pollFits(table) {
    var project = document.getElementById("agreement").getAttribute("data-project");
    function tick() {
      getJSON("/api/v1/projects/" + project + "/fits").then(function (body) {
        var active = false;
        body.fits.forEach(function (f) {
          var row = table.querySelector('tr[data-fit="' + f.id + '"]');
          if (!row) { return; }
          var cells = row.children;
          cells[2].innerHTML = "";
          var span = document.createElement("span");
          span.className = "state state-" + f.state;
          span.textContent = f.state;
          cells[2].appendChild(span);
          cells[3].textContent = Math.round(100 * (f.progress || 0)) + "%";
          cells[5].textContent = f.message || "";
          if (f.state === "queued" || f.state === "running") { active = true; }
        });
        if (active) { setTimeout(tick, 1500); }
      }).catch(function () { setTimeout(tick, 5000); });
    }
    setTimeout(tick, 1500);
  }

  var coefNames = {
    krippendorff_alpha: "Krippendorff's alpha", fleiss_kappa: "Fleiss' kappa", randolph_kappa: "Randolph's free-marginal kappa",
    scott_pi: "Scott's pi", gwet_ac1: "Gwet's AC1", gwet_ac2: "Gwet's AC2", brennan_prediger: "Brennan-Prediger",
    percent_agreement: "Percent agreement", conger_kappa: "Conger's kappa", icc: "ICC"
  };

  // agreementRows lists the document's coefficients; withWeighted adds
  // the weighted ones (doc.weighted: a set per weighting), which the page
  // shows when its options ask for weights (weights=, weights_matrix=).
  function agreementRows(doc, withWeighted) {
    var rows = [];
    function add(name, c) {
      if (c && typeof c.value === "number") { rows.push([name, c]); }
    }
    function name(k) { return coefNames[k] || k.replace(/_/g, " "); }
    Object.keys(doc).forEach(function (k) {
      var v = doc[k];
      if (!v || typeof v !== "object" || Array.isArray(v) || k === "aggregators" || k === "weighted") { return; }
      var label = name(k);
      if (typeof v.value === "number") { add(label, v); return; }
      Object.keys(v).forEach(function (sub) { add(label + " (" + sub + ")", v[sub]); });
    });
    if (withWeighted && doc.weighted) {
      Object.keys(doc.weighted).forEach(function (w) {
        var set = doc.weighted[w];
        Object.keys(set).forEach(function (k) { add(name(k) + " (" + w + " weights)", set[k]); });
      });
    }
    return rows;
  }

  function loadAgreement(box) {
    var id = box.getAttribute("data-project");
    var status = document.getElementById("agreement-status");
    var table = document.getElementById("agreement-table");
    var ties = box.getAttribute("data-ties");
    // The page's agreement options (tie rule, intervals, null value,
    // weights) as the API's query, checked by the server.
    var query = box.getAttribute("data-query");
    var tf = document.getElementById("ties-form");
    if (tf) {
      // The tie rule reloads the page, and with it the analysis.
      tf.querySelector("select").addEventListener("change", function () { tf.submit(); });
    }
    // A background analysis can be cancelled (its jobs on every worker).
    var cancelled = false;
    var cancelBtn = document.getElementById("agreement-cancel");
    if (cancelBtn) {
      cancelBtn.addEventListener("click", function () {
        cancelBtn.disabled = true;
        fetch("/api/v1/projects/" + id + "/agreement", { method: "DELETE", credentials: "same-origin",
          headers: { "Accept": "application/json", "X-CSRF-Token": cancelBtn.getAttribute("data-csrf") } }).then(function (r) {
          if (!r.ok) { throw new Error("HTTP " + r.status); }
          cancelled = true;
          cancelBtn.hidden = true;
          status.removeAttribute("data-job");
          status.textContent = "The agreement analysis was cancelled; reload the page to start it again.";
        }).catch(function (e) {
          cancelBtn.disabled = false;
          status.textContent = "Cancelling the agreement analysis failed: " + e.message;
        });
      });
    }
    getJobJSON("/api/v1/projects/" + id + "/agreement" + (query ? "?" + query : ""), function (job) {
      status.textContent = "Computing the agreement of " + job.labels + " labels in the background: " + job.phase +
        " (" + fmtDur(job.elapsed_seconds || 0) + " so far); this page shows the result when it is done…";
      status.setAttribute("data-job", job.status);
      if (cancelBtn) { cancelBtn.hidden = false; }
    }, function () { return cancelled; }).then(function (doc) {
      if (cancelBtn) { cancelBtn.hidden = true; }
      status.removeAttribute("data-job");
      var tbody = table.querySelector("tbody");
      var opts = new URLSearchParams(query || "");
      agreementRows(doc, opts.has("weights") || opts.has("weights_matrix")).forEach(function (r) {
        var tr = document.createElement("tr");
        var c = r[1];
        var cells = [r[0], c.value.toFixed(3), (typeof c.ci_low === "number" ? c.ci_low.toFixed(3) + " to " + c.ci_high.toFixed(3) : ""),
          (typeof c.se === "number" ? c.se.toFixed(3) : ""), (typeof c.z === "number" ? c.z.toFixed(2) : ""), fmtP(c.p_value)];
        if (typeof doc.null_value === "number") { cells.push(fmtP(c.p_value_null)); }
        cells.forEach(function (t, i) {
          var td = document.createElement("td");
          td.textContent = t;
          if (i > 0) { td.className = "num"; }
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      status.textContent = doc.items + " items, " + doc.raters + " raters, " + doc.labels + " labels; intervals: " +
        (doc.bootstrap ? doc.bootstrap + " bootstrap replicates over items" : "analytic") + ". The full document (pairwise kappas, aggregators, rater profiles) is at /api/v1/projects/" + id + "/agreement.";
      table.hidden = false;
      aggregatorTies(doc, ties);
      aggregatorTable(doc);
      agreementDetail(id, doc);
    }).catch(function (e) {
      if (cancelled) { return; }
      status.textContent = "No agreement coefficients: " + e.message;
    });
  }

  // aggregatorTies says how many items the majority vote and Wawa found
  // tied and, when the document lists their items, how many items each
  // gives each label under the tie rule in force.
  function aggregatorTies(doc, ties) {
    var p = document.getElementById("aggregator-ties");
    if (!p || !doc.aggregators) { return; }
    var rule = ties === "first" ? "the first label in the scheme's order" : "the label most frequent overall";
    var parts = [];
    [["majority", "Majority vote"], ["wawa", "Wawa"]].forEach(function (a) {
      var c = doc.aggregators[a[0]];
      if (!c) { return; }
      var s = a[1] + ": " + (c.ties || 0) + " tied items";
      if (c.items && c.items.length) {
        var counts = {}, order = [];
        c.items.forEach(function (it) {
          if (!(it.label in counts)) { counts[it.label] = 0; order.push(it.label); }
          counts[it.label]++;
        });
        order.sort();
        s += " (items per label: " + order.map(function (l) { return l + " " + counts[l]; }).join(", ") + ")";
      }
      parts.push(s);
    });
    if (parts.length) { p.textContent = parts.join("; ") + ". Ties go to " + rule + "."; }
  }

  // aggregatorTable lists the document's baseline aggregators: how many
  // items each gives each label, and how its run went (iterations,
  // convergence, start and seed), so that the options above (Dawid-Skene's
  // iterations, the random starts, ...) show.
  function aggregatorTable(doc) {
    var table = document.getElementById("aggregator-table");
    if (!table || !doc.aggregators) { return; }
    var tbody = table.querySelector("tbody");
    Object.keys(doc.aggregators).forEach(function (k) {
      var c = doc.aggregators[k];
      var counts = {}, order = [];
      (c.items || []).forEach(function (it) {
        if (typeof it.label !== "string") { return; }
        if (!(it.label in counts)) { counts[it.label] = 0; order.push(it.label); }
        counts[it.label]++;
      });
      order.sort();
      var run = "";
      if (c.fit) {
        run = c.fit.iterations + " iterations, " + (c.fit.converged ? "converged" : "not converged") + ", " + c.fit.start + " start, seed " + c.fit.seed;
      }
      var tr = document.createElement("tr");
      tr.setAttribute("data-aggregator", k);
      [k.replace(/_/g, " "), order.map(function (l) { return l + " " + counts[l]; }).join(", "), run].forEach(function (t) {
        var td = document.createElement("td");
        td.textContent = t;
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.hidden = !tbody.children.length;
  }

  // kappaColour maps an agreement value to a red (0 and below), yellow
  // (0.4), green (0.8 and above) scale.
  function kappaColour(v) {
    var stops = [[0, [248, 105, 107]], [0.4, [255, 235, 132]], [0.8, [99, 190, 123]]];
    if (v <= stops[0][0]) { return "rgb(" + stops[0][1].join(",") + ")"; }
    for (var i = 1; i < stops.length; i++) {
      if (v <= stops[i][0]) {
        var t = (v - stops[i - 1][0]) / (stops[i][0] - stops[i - 1][0]);
        var c = stops[i - 1][1].map(function (a, k) { return Math.round(a + t * (stops[i][1][k] - a)); });
        return "rgb(" + c.join(",") + ")";
      }
    }
    return "rgb(" + stops[stops.length - 1][1].join(",") + ")";
  }

  function cellText(tr, text, cls, v) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    if (v !== undefined) { td.setAttribute("data-v", v === null ? "" : String(v)); }
    tr.appendChild(td);
    return td;
  }

  function fmt3(v) { return typeof v === "number" ? v.toFixed(3) : "–"; }

  // fmtP writes a p-value: 3 significant digits, "< 0.0001" below.
  function fmtP(v) {
    if (typeof v !== "number") { return "–"; }
    return v < 1e-4 ? "< 0.0001" : v.toPrecision(3);
  }

  // matrixMax is the most raters the heatmap shows (those with the most
  // labels); the CSV has them all.
  var matrixMax = 40;

  // The pairwise heatmap, the per-item table (filtered on the server) and
  // the per-rater table of the agreement document.
  function agreementDetail(id, doc) {
    var box = document.getElementById("agreement-detail");
    if (!box) { return; }
    box.hidden = false;
    var m = doc.pairwise_matrix, mt = document.getElementById("matrix-table");
    if (m && m.raters.length) {
      document.getElementById("matrix-weights").textContent = m.weights + " weights";
      var order = m.raters.map(function (r, i) { return i; });
      order.sort(function (a, b) { return m.n[b][b] - m.n[a][a] || a - b; });
      if (order.length > matrixMax) {
        order = order.slice(0, matrixMax).sort(function (a, b) { return a - b; });
        document.getElementById("matrix-note").textContent += " Showing the " + matrixMax + " raters with the most labels of " + m.raters.length + "; the CSV has every pair.";
      }
      var hr = document.createElement("tr");
      hr.appendChild(document.createElement("th"));
      order.forEach(function (j) { var th = document.createElement("th"); th.textContent = m.raters[j]; th.scope = "col"; hr.appendChild(th); });
      mt.tHead.appendChild(hr);
      order.forEach(function (i) {
        var tr = document.createElement("tr");
        var th = document.createElement("th");
        th.textContent = m.raters[i];
        th.scope = "row";
        tr.appendChild(th);
        order.forEach(function (j) {
          var td = document.createElement("td");
          if (i === j) {
            td.className = "self";
            td.title = m.raters[i] + ": " + m.n[i][i] + " items";
          } else {
            var k = m.kappa[i][j], n = m.n[i][j];
            td.textContent = typeof k === "number" ? k.toFixed(2) : "";
            if (n > 0) { var sm = document.createElement("small"); sm.textContent = "n=" + n; td.appendChild(sm); }
            if (typeof k === "number") { td.style.backgroundColor = kappaColour(k); }
            td.title = m.raters[i] + " and " + m.raters[j] + ": kappa " + fmt3(k) + " on " + n + " shared items";
            td.setAttribute("data-n", String(n));
          }
          tr.appendChild(td);
        });
        mt.tBodies[0].appendChild(tr);
      });
    } else {
      document.getElementById("matrix-note").textContent = "No pairwise matrix: " + ((doc.notes || []).filter(function (n) { return n.indexOf("pairwise_matrix") === 0; })[0] || "no pairs of raters share an item") + ".";
    }

    var rt = document.getElementById("rater-agreement-table");
    (doc.rater_agreement || []).forEach(function (r) {
      var tr = document.createElement("tr");
      cellText(tr, r.rater);
      cellText(tr, String(r.labels), "num", r.labels);
      cellText(tr, String(r.items), "num", r.items);
      cellText(tr, String(r.partners), "num", r.partners);
      cellText(tr, fmt3(r.agreement), "num", r.agreement);
      cellText(tr, fmt3(r.mean_kappa), "num", r.mean_kappa);
      cellText(tr, fmt3(r.pooled_kappa), "num", r.pooled_kappa);
      rt.tBodies[0].appendChild(tr);
    });

    var it = document.getElementById("item-agreement-table");
    var below = it.getAttribute("data-below");
    var st = document.getElementById("item-agreement-status");
    var url = "/api/v1/projects/" + id + "/agreement/items?limit=200" + (below ? "&below=" + encodeURIComponent(below) : "");
    getJobJSON(url).then(function (t) {
      t.items.forEach(function (r) {
        var tr = document.createElement("tr");
        var td = cellText(tr, "");
        var a = document.createElement("a");
        a.href = "/projects/" + id + "/labels?item=" + encodeURIComponent(r.item);
        a.textContent = r.item;
        td.appendChild(a);
        cellText(tr, String(r.labels), "num", r.labels);
        var ac = cellText(tr, fmt3(r.agreement), "num", r.agreement);
        if (typeof r.agreement === "number") { ac.style.backgroundColor = kappaColour(r.agreement); }
        cellText(tr, Object.keys(r.counts).sort().map(function (k) { return k + " ×" + r.counts[k]; }).join(", "), "small");
        it.tBodies[0].appendChild(tr);
      });
      var what = below ? t.matching + " of " + t.scored + " items with 2 or more labels score below " + below : t.scored + " items with 2 or more labels (" + (t.total - t.scored) + " with one)";
      st.textContent = "Agreement: " + t.agreement_score + ". " + what + "; lowest first" + (t.matching > t.items.length ? ", the first " + t.items.length + " shown (the CSV has them all)" : "") + ".";
      it.setAttribute("data-rows", String(t.items.length));
    }).catch(function (e) {
      st.textContent = "No per-item agreement: " + e.message;
      it.setAttribute("data-rows", "error");
    });
  }

  // Sortable tables: click a header to sort by it (numbers by data-v).
  function makeSortable(table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var num = th.getAttribute("data-type") === "num";
        var asc = !th.classList.contains("asc");
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var tbody = table.tBodies[0];
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var r;
          if (num) {
            var xv = parseFloat(x.getAttribute("data-v")), yv = parseFloat(y.getAttribute("data-v"));
            if (isNaN(xv)) { xv = Infinity; }
            if (isNaN(yv)) { yv = Infinity; }
            r = xv - yv;
          } else {
            r = x.textContent.localeCompare(y.textContent, undefined, { numeric: true });
          }
          return asc ? r : -r;
        });
        rows.forEach(function (row) { tbody.appendChild(row); });
      });
    });
  }

  function makeSearchable(input, table, counter) {
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var hit = q === "" || row.textContent.toLowerCase().indexOf(q) >= 0;
        row.hidden = !hit;
        if (hit) { shown++; }
      });
      if (counter) { counter.textContent = shown + " items"; }
    });
  }

  // The start-fit form: the engine select offers the chosen model's
  // engines (data-models), and the settings (data-for: the model:engine
  // pairs that use them) show for the chosen model and engine only; hidden
  // settings are disabled, so that they are not sent. The hint under the
  // form describes the chosen model.
  function fitForm(form) {
    var model = document.getElementById("fit-model"), engine = document.getElementById("fit-engine");
    var doc = document.getElementById("model-doc");
    if (!model || !engine) { return; }
    function has(list, v) { return (list || "").split(" ").indexOf(v) >= 0; }
    function toggle(el, on) {
      el.hidden = !on;
      if (el.tagName === "OPTION" || el.tagName === "FIELDSET") {
        el.disabled = !on;
      } else {
        el.querySelectorAll("input, select, textarea").forEach(function (c) { c.disabled = !on; });
      }
    }
    // keep keeps an enabled option selected.
    function keep(select) {
      var cur = select.options[select.selectedIndex];
      if (cur && !cur.disabled) { return; }
      for (var i = 0; i < select.options.length; i++) {
        if (!select.options[i].disabled) { select.selectedIndex = i; return; }
      }
    }
    function update() {
      var m = model.value;
      Array.prototype.forEach.call(engine.options, function (o) { toggle(o, has(o.getAttribute("data-models"), m)); });
      keep(engine);
      var pair = m + ":" + engine.value;
      form.querySelectorAll("[data-for]").forEach(function (el) { toggle(el, has(el.getAttribute("data-for"), pair)); });
      form.querySelectorAll("select").forEach(keep);
      var opt = model.options[model.selectedIndex];
      if (doc && opt && opt.getAttribute("data-doc")) { doc.textContent = opt.getAttribute("data-doc"); }
      form.setAttribute("data-pair", pair);
    }
    model.addEventListener("change", update);
    engine.addEventListener("change", update);
    update();
  }

  // Import form: a preview of the label file's first rows (CSV, TSV or
  // JSON, read in the browser), its column names offered in the column
  // fields, and a guess of the label column: the one column whose values
  // in the preview are all levels of the project's scheme.
  function splitCSVLine(line, sep) {
    var out = [], cur = "", q = false;
    for (var i = 0; i < line.length; i++) {
      var ch = line[i];
      if (q) {
        if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (ch === '"') { q = false; } else { cur += ch; }
      } else if (ch === '"') { q = true; } else if (ch === sep) { out.push(cur); cur = ""; } else { cur += ch; }
    }
    out.push(cur);
    return out;
  }

  function previewRows(text) {
    var t = text.replace(/^\uFEFF/, "").trim();
    if (t[0] === "[" || t[0] === "{") {
      var recs = [];
      try {
        var v = JSON.parse(t);
        recs = Array.isArray(v) ? v : [v];
      } catch (e) {
        t.split(/\r?\n/).slice(0, 6).forEach(function (l) { try { recs.push(JSON.parse(l)); } catch (e2) { /* a cut line */ } });
      }
      recs = recs.filter(function (r) { return r && typeof r === "object" && !Array.isArray(r); }).slice(0, 5);
      var cols = [];
      recs.forEach(function (r) { Object.keys(r).forEach(function (k) { if (cols.indexOf(k) < 0) { cols.push(k); } }); });
      return { cols: cols, rows: recs.map(function (r) { return cols.map(function (k) { var x = r[k]; return x === undefined || x === null ? "" : (typeof x === "object" ? JSON.stringify(x) : String(x)); }); }) };
    }
    var lines = t.split(/\r?\n/).slice(0, 6);
    var sep = lines[0].indexOf("\t") >= 0 ? "\t" : (lines[0].indexOf(";") >= 0 && lines[0].indexOf(",") < 0 ? ";" : ",");
    var cols2 = splitCSVLine(lines[0], sep).map(function (c) { return c.trim(); });
    return { cols: cols2, rows: lines.slice(1).filter(function (l) { return l.trim() !== ""; }).map(function (l) { return splitCSVLine(l, sep); }) };
  }

  function importForm(form) {
    var file = form.querySelector("input[name=file]");
    var box = document.getElementById("import-preview");
    var table = document.getElementById("import-preview-table");
    var guess = document.getElementById("import-guess");
    var list = document.getElementById("import-cols");
    var labelCol = form.querySelector("input[name=label_col]");
    var levels = (form.getAttribute("data-levels") || "").split("|").filter(function (x) { return x !== ""; });
    if (!file || !box || !table) { return; }
    file.addEventListener("change", function () {
      box.hidden = true;
      var f = file.files && file.files[0];
      if (!f || /\.(xlsx|zip)$/i.test(f.name)) { return; }
      f.slice(0, 262144).text().then(function (text) {
        var p = previewRows(text);
        if (!p.cols.length) { return; }
        table.textContent = "";
        list.textContent = "";
        var head = table.createTHead().insertRow();
        p.cols.forEach(function (c) {
          var th = document.createElement("th");
          th.textContent = c;
          head.appendChild(th);
          var o = document.createElement("option");
          o.value = c;
          list.appendChild(o);
        });
        var body = table.createTBody();
        p.rows.forEach(function (r) {
          var tr = body.insertRow();
          p.cols.forEach(function (c, i) { tr.insertCell().textContent = (r[i] || "").slice(0, 60); });
        });
        var cands = p.cols.filter(function (c, i) {
          var vals = p.rows.map(function (r) { return (r[i] || "").trim(); }).filter(function (v) { return v !== ""; });
          return levels.length > 0 && vals.length > 0 && vals.every(function (v) { return levels.indexOf(v) >= 0; });
        });
        var msg = "The first rows of " + f.name + " (" + p.cols.length + " columns).";
        if (cands.length === 1) {
          msg += " The label column looks like \u201c" + cands[0] + "\u201d: its values are levels of the project's scheme.";
          if (labelCol && !labelCol.value) { labelCol.value = cands[0]; }
        } else if (cands.length > 1) {
          msg += " Columns whose values are levels of the scheme: " + cands.join(", ") + " (a wide file has one per rater; else name the label column).";
        }
        guess.textContent = msg;
        box.hidden = false;
      });
    });
  }

  // exportLink makes a report download (the workbook, the report document)
  // wait for its background build: while the route answers 202 the link
  // says "preparing" with the job's phase and asks again after
  // Retry-After; then the file downloads. Without JavaScript the link
  // answers the 202 JSON, to be followed again later.
  function exportLink(a) {
    var label = a.textContent;
    var status = document.getElementById(a.getAttribute("data-status"));
    var busy = false;
    function say(msg) { if (status) { status.textContent = msg; } }
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      if (busy) { return; }
      busy = true;
      a.setAttribute("aria-busy", "true");
      function done(msg) {
        busy = false;
        a.removeAttribute("aria-busy");
        a.textContent = label;
        say(msg || "");
      }
      function ask() {
        fetch(a.href, { credentials: "same-origin" }).then(function (r) {
          if (r.status === 202) {
            return r.json().then(function (body) {
              a.textContent = label + ": preparing…";
              say("Preparing " + label + ": " + (body.phase || body.status) + " (" + fmtDur(body.elapsed_seconds || 0) + " so far)");
              var wait = parseInt(r.headers.get("Retry-After"), 10) || body.retry_after_seconds || 2;
              setTimeout(ask, wait * 1000);
            });
          }
          if (!r.ok) {
            return r.json().then(function (body) {
              throw new Error((body && body.error && body.error.message) || ("HTTP " + r.status));
            });
          }
          var name = (r.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/);
          return r.blob().then(function (blob) {
            var url = URL.createObjectURL(blob);
            var tmp = document.createElement("a");
            tmp.href = url;
            tmp.download = name ? name[1] : "";
            document.body.appendChild(tmp);
            tmp.click();
            tmp.remove();
            setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
            done("");
          });
        }).catch(function (err) { done(label + ": " + err.message); });
      }
      ask();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("a[data-export]").forEach(exportLink);
    var imp = document.getElementById("import-form");
    if (imp) { importForm(imp); }
    setWidths();
    var status = document.getElementById("status");
    if (status) { pollFit(status); }
    var agreement = document.getElementById("agreement");
    if (agreement) { loadAgreement(agreement); }
    var fits = document.getElementById("fits-table");
    if (fits && fits.getAttribute("data-active")) { pollFits(fits); }
    var ff = document.getElementById("fit-form");
    if (ff) { fitForm(ff); }
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    // Search boxes name their table and counter (the ranking, the
    // consensus classes).
    document.querySelectorAll("input[type=search][data-table]").forEach(function (input) {
      var table = document.getElementById(input.getAttribute("data-table"));
      if (table) { makeSearchable(input, table, document.getElementById(input.getAttribute("data-count"))); }
    });
  });
})();
