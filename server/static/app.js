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

  function agreementRows(doc) {
    var rows = [];
    function add(name, c) {
      if (c && typeof c.value === "number") { rows.push([name, c]); }
    }
    Object.keys(doc).forEach(function (k) {
      var v = doc[k];
      if (!v || typeof v !== "object" || Array.isArray(v) || k === "aggregators" || k === "weighted") { return; }
      var label = coefNames[k] || k.replace(/_/g, " ");
      if (typeof v.value === "number") { add(label, v); return; }
      Object.keys(v).forEach(function (sub) { add(label + " (" + sub + ")", v[sub]); });
    });
    return rows;
  }

  function loadAgreement(box) {
    var id = box.getAttribute("data-project");
    var status = document.getElementById("agreement-status");
    var table = document.getElementById("agreement-table");
    getJSON("/api/v1/projects/" + id + "/agreement").then(function (doc) {
      var tbody = table.querySelector("tbody");
      agreementRows(doc).forEach(function (r) {
        var tr = document.createElement("tr");
        var c = r[1];
        [r[0], c.value.toFixed(3), (typeof c.ci_low === "number" ? c.ci_low.toFixed(3) + " to " + c.ci_high.toFixed(3) : "")].forEach(function (t, i) {
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
    }).catch(function (e) {
      status.textContent = "No agreement coefficients: " + e.message;
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

  document.addEventListener("DOMContentLoaded", function () {
    setWidths();
    var status = document.getElementById("status");
    if (status) { pollFit(status); }
    var agreement = document.getElementById("agreement");
    if (agreement) { loadAgreement(agreement); }
    var fits = document.getElementById("fits-table");
    if (fits && fits.getAttribute("data-active")) { pollFits(fits); }
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    // Search boxes name their table and counter (the ranking, the
    // consensus classes).
    document.querySelectorAll("input[type=search][data-table]").forEach(function (input) {
      var table = document.getElementById(input.getAttribute("data-table"));
      if (table) { makeSearchable(input, table, document.getElementById(input.getAttribute("data-count"))); }
    });
  });
})();
