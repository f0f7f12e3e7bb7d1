// The arena's pages: the leaderboard kept live, tables sorted by a click,
// submissions' statuses moving without a reload, an archive dropped on the
// upload form. Everything a competitor wrote is put into the page as text
// (textContent), never as markup.
"use strict";

(function () {
  const page = document.body.dataset.page;

  function cell(text, value, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    td.dataset.v = value === undefined ? text : String(value);
    if (cls) td.className = cls;
    return td;
  }

  function named(text) {
    const b = document.createElement("bdi");
    b.textContent = text;
    return b;
  }

  function ageText(s) {
    if (s < 120) return Math.round(s) + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    if (s < 172800) return Math.round(s / 3600) + " h";
    return Math.round(s / 86400) + " days";
  }

  function signed(x) {
    const r = Math.round(x);
    return (r > 0 ? "+" : "") + r;
  }

  function boardRow(e) {
    const tr = document.createElement("tr");
    tr.appendChild(cell(String(e.rank), e.rank));
    const bot = cell("", e.bot);
    const a = document.createElement("a");
    a.href = "/bots/" + encodeURIComponent(e.bot);
    a.appendChild(named(e.bot));
    bot.appendChild(a);
    const ver = document.createElement("span");
    ver.className = "ver";
    ver.textContent = " v" + e.version;
    bot.appendChild(ver);
    tr.appendChild(bot);
    const owner = cell("", e.owner, "wide");
    owner.appendChild(named(e.owner));
    tr.appendChild(owner);
    tr.appendChild(cell(e.language || "", e.language || "", "wide"));
    tr.appendChild(cell(e.rating.ordinal.toFixed(1), e.rating.ordinal));
    tr.appendChild(cell(e.rating.low.toFixed(1) + " – " + e.rating.high.toFixed(1), e.rating.low, "wide"));
    const mle = e.mle_elo ? signed(e.mle_elo.elo) + " ± " + Math.round(e.mle_elo.err95) : "";
    tr.appendChild(cell(mle, e.mle_elo ? e.mle_elo.elo : "", "wide"));
    tr.appendChild(cell(String(e.games), e.games));
    tr.appendChild(cell(ageText(e.age_s), e.age_s, "wide"));
    return tr;
  }

  // ---------------------------------------------------------------- sorting

  function sortBy(table, th) {
    const heads = Array.from(table.tHead.rows[0].cells);
    const col = heads.indexOf(th);
    const numeric = th.dataset.type === "num";
    const dir = th.classList.contains("sorted-asc") ? -1 : 1;
    heads.forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
    th.classList.add(dir === 1 ? "sorted-asc" : "sorted-desc");
    table.dataset.sortCol = String(col);
    table.dataset.sortDir = String(dir);
    applySort(table);
  }

  function applySort(table) {
    if (table.dataset.sortCol === undefined) return;
    const col = Number(table.dataset.sortCol);
    const dir = Number(table.dataset.sortDir);
    const th = table.tHead.rows[0].cells[col];
    const numeric = th.dataset.type === "num";
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).filter((r) => !r.classList.contains("empty"));
    rows.sort((a, b) => {
      const x = a.cells[col].dataset.v || "";
      const y = b.cells[col].dataset.v || "";
      const c = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return c * dir;
    });
    rows.forEach((r) => body.appendChild(r));
  }

  document.querySelectorAll("table.sortable").forEach((table) => {
    Array.from(table.tHead.rows[0].cells).forEach((th) => {
      if (th.dataset.key) th.addEventListener("click", () => sortBy(table, th));
    });
  });

  // ---------------------------------------------------------------- live leaderboard

  if (page === "leaderboard" && window.EventSource) {
    const table = document.getElementById("board");
    const played = document.getElementById("games-played");
    const source = new EventSource("/events/leaderboard");
    source.addEventListener("board", (ev) => {
      const board = JSON.parse(ev.data);
      const body = table.tBodies[0];
      const rows = board.bots.map(boardRow);
      if (rows.length) body.replaceChildren(...rows);
      played.textContent = String(board.games_played);
      applySort(table);
      document.body.dataset.updated = String(Date.now());
    });
  }

  // ---------------------------------------------------------------- my submissions

  function showStatus(el, status) {
    el.textContent = status;
    el.dataset.status = status;
    el.className = "status status-" + status;
  }

  if ((page === "me" || page === "submission") && window.EventSource) {
    const source = new EventSource("/events/me");
    source.addEventListener("subs", (ev) => {
      const subs = JSON.parse(ev.data);
      let reload = false;
      subs.forEach((s) => {
        const row = document.querySelector('#subs tr[data-id="' + s.id + '"] .status');
        if (row && row.dataset.status !== s.status) showStatus(row, s.status);
        const one = document.getElementById("status");
        if (one && Number(one.dataset.id) === s.id && one.dataset.status !== s.status) {
          showStatus(one, s.status);
          reload = s.status === "active" || s.status === "failed"; // the logs are complete now
        }
      });
      if (reload) window.location.reload();
    });
  }

  // A close time is given in UTC; say it in the viewer's own time as well.
  document.querySelectorAll("time[datetime]").forEach((el) => {
    const when = new Date(el.getAttribute("datetime"));
    if (isNaN(when.getTime())) return;
    const local = document.createElement("span");
    local.className = "local-time";
    local.textContent = " (your time: " + when.toLocaleString() + ")";
    el.after(local);
  });

  const form = document.getElementById("upload");
  if (form) {
    const input = form.querySelector('input[type="file"]');
    ["dragenter", "dragover"].forEach((name) =>
      form.addEventListener(name, (ev) => {
        ev.preventDefault();
        form.classList.add("dragging");
      })
    );
    ["dragleave", "drop"].forEach((name) => form.addEventListener(name, () => form.classList.remove("dragging")));
    form.addEventListener("drop", (ev) => {
      ev.preventDefault();
      if (ev.dataTransfer && ev.dataTransfer.files.length) input.files = ev.dataTransfer.files;
    });
  }
})();
