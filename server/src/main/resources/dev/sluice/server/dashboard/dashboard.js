// Sluice's dashboard: polls GET v1/dashboard every second and shows the rules and decisions per second by rule; the
// other tables of a poll (the top denied keys of the last minute, reservations and settles by rule, slot steps by
// domain and the store's health) are drawn by dashboard-tables.js, loaded before this file. The form checks a
// descriptor with hits: 0 through POST v1/check. No framework, no build step.
//
// Everything the service sends — and keys are made by the service's callers — goes into the page with textContent or
// an attribute set through the DOM, never as markup: a key '<script>…' shows as those characters.
//
// Rates are computed here from the totals of two polls (the service keeps counters, not rates), over the service's
// own monotonic clock (clock_ms), so a slow or late poll does not distort them. Each chart keeps its points in data-admitted,
// data-denied and data-shadow (per second, comma-separated, oldest first) and a sentence in aria-label.
'use strict';
(function () {
  const POLL_MS = 1000;
  const HISTORY = 60;
  const TOKEN = 'sluice.dashboard.token';
  const COLORS = {admitted: '#2e7d32', denied: '#c62828', shadow: '#ef6c00'};

  const state = {
    prev: null,             // the previous poll: {t, counts: Map(id -> {admitted, denied, shadow}), degraded}
    history: new Map(),     // id -> {admitted: [], denied: [], shadow: []}, per second, oldest first
    rulesSignature: null,
    ruleRows: new Map(),    // id -> row parts, for the rules table
    seriesRows: new Map(),  // id -> row parts, for the other series
    polls: 0,
    timer: null,
    waitingForToken: false,
  };

  const $ = (id) => document.getElementById(id);
  const {el, seriesId, rate, renderTopKeys, renderSettles, renderInFlight, renderStore} = window.SluiceTables;

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const token = sessionStorage.getItem(TOKEN);
    if (token) {
      h.Authorization = 'Bearer ' + token;
    }
    return h;
  }

  function setStatus(text, isError) {
    const s = $('status');
    s.textContent = text;
    s.classList.toggle('error', !!isError);
  }

  // ---- polling and the token

  function schedule() {
    if (state.timer === null && !state.waitingForToken) {
      state.timer = setTimeout(poll, POLL_MS);
    }
  }

  async function poll() {
    state.timer = null;
    let answer;
    try {
      answer = await fetch('v1/dashboard', {headers: headers(), cache: 'no-store'});
    } catch (e) {
      setStatus('cannot reach the service (' + e.message + '); retrying every second', true);
      schedule();
      return;
    }
    if (answer.status === 401) {
      askForToken(sessionStorage.getItem(TOKEN) ? 'The service refused this token.' : null);
      return;
    }
    if (!answer.ok) {
      setStatus('the service answered ' + answer.status + ' to GET /v1/dashboard; retrying every second', true);
      schedule();
      return;
    }
    let data;
    try {
      data = await answer.json();
    } catch (e) {
      setStatus('the dashboard data is not JSON: ' + e.message, true);
      schedule();
      return;
    }
    $('token-section').hidden = true;
    $('forget-token').hidden = !sessionStorage.getItem(TOKEN);
    try {
      render(data);
    } catch (e) {
      setStatus('cannot show the data: ' + e.message, true);
    }
    schedule();
  }

  function askForToken(problem) {
    state.waitingForToken = true;
    sessionStorage.removeItem(TOKEN);
    $('token-section').hidden = false;
    $('forget-token').hidden = true;
    const error = $('token-error');
    error.hidden = !problem;
    error.textContent = problem || '';
    setStatus('waiting for the token', false);
    $('token-input').focus();
  }

  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token-input').value.trim();
    if (!token) {
      return;
    }
    sessionStorage.setItem(TOKEN, token);
    $('token-input').value = '';
    state.waitingForToken = false;
    poll();
  });

  $('forget-token').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN);
    location.reload();
  });

  // ---- rendering one poll

  function render(d) {
    const counts = new Map();
    for (const s of d.series) {
      counts.set(seriesId(s.domain, s.rule), {
        admitted: s.ok + s.unlimited + s.no_rule,   // answered OK: within a limit, unlimited, or no rule to apply
        denied: s.over_limit + s.blocked,
        shadow: s.shadow_over_limit,
      });
    }
    const prev = state.prev;
    const seconds = prev ? (d.clock_ms - prev.t) / 1000 : 0;
    const ids = new Set(counts.keys());
    for (const r of d.rules) {
      ids.add(seriesId(r.domain, r.id));
    }
    for (const id of ids) {
      let h = state.history.get(id);
      if (!h) {
        h = {admitted: [], denied: [], shadow: []};
        state.history.set(id, h);
      }
      if (seconds > 0) {
        const now = counts.get(id) || {admitted: 0, denied: 0, shadow: 0};
        const before = prev.counts.get(id) || {admitted: 0, denied: 0, shadow: 0};
        for (const k of ['admitted', 'denied', 'shadow']) {
          h[k].push(Math.max(0, (now[k] - before[k]) / seconds));
          if (h[k].length > HISTORY) {
            h[k].shift();
          }
        }
      }
    }
    renderRules(d.rules, counts);
    renderOtherSeries(d, counts);
    renderTopKeys(d.top_denied);
    const settles = renderSettles(d.settles || [], prev, seconds);
    const inFlight = renderInFlight(d.in_flight || [], prev, seconds);
    renderStore(d.store, prev, seconds);
    state.prev = {t: d.clock_ms, counts: counts, degraded: d.store.degraded, settles: settles, inFlight: inFlight};
    state.polls++;
    document.body.dataset.polls = String(state.polls);
    const domains = new Set(d.rules.map((r) => r.domain));
    setStatus('updated ' + new Date().toLocaleTimeString() + ' · ' + domains.size + ' domain(s), ' + d.rules.length
        + ' rule(s) · store ' + d.store.name, false);
  }

  function limitText(r) {
    if (r.kind === 'unlimited') {
      return 'unlimited';
    }
    const per = r.unit ? r.unit : r.window;
    return r.kind === 'blocked' ? 'blocked (0 per ' + per + ')' : r.requests_per_unit + ' per ' + per;
  }

  function flags(r) {
    const f = [];
    if (r.shadow_mode) {
      f.push('shadow');
    }
    if (r.quota_mode) {
      f.push('quota');
    }
    if (r.detailed_metric) {
      f.push('detailed metric');
    }
    for (const name of r.replaces) {
      f.push('replaces ' + name);
    }
    return f.join(', ');
  }

  function renderRules(rules, counts) {
    const signature = JSON.stringify(rules);
    if (signature !== state.rulesSignature) {
      state.rulesSignature = signature;
      const body = $('rules-body');
      body.replaceChildren();
      state.ruleRows.clear();
      const domains = $('domains');
      domains.replaceChildren();
      for (const domain of new Set(rules.map((r) => r.domain))) {
        const option = document.createElement('option');
        option.value = domain;
        domains.appendChild(option);
      }
      for (const r of rules) {
        const tr = document.createElement('tr');
        tr.dataset.domain = r.domain;
        tr.dataset.rule = r.id;
        tr.appendChild(el('td', r.domain));
        const idCell = el('td', r.id, 'mono');
        idCell.title = r.source || '';
        tr.appendChild(idCell);
        tr.appendChild(el('td', r.name || '—'));
        tr.appendChild(el('td', r.algorithm || '—'));
        tr.appendChild(el('td', limitText(r)));
        tr.appendChild(el('td', r.capacity === null ? '—' : r.capacity, 'num'));
        tr.appendChild(el('td', flags(r)));
        const row = chartCells(tr, r.domain + ' ' + r.id);
        body.appendChild(tr);
        state.ruleRows.set(seriesId(r.domain, r.id), row);
      }
    }
    for (const [id, row] of state.ruleRows) {
      updateRow(row, state.history.get(id), counts.get(id));
    }
  }

  function renderOtherSeries(d, counts) {
    const ruleIds = new Set(d.rules.map((r) => seriesId(r.domain, r.id)));
    const body = $('series-body');
    const present = new Set();
    for (const s of d.series) {
      const id = seriesId(s.domain, s.rule);
      if (ruleIds.has(id)) {
        continue;
      }
      present.add(id);
      let row = state.seriesRows.get(id);
      if (!row) {
        const tr = document.createElement('tr');
        tr.dataset.domain = s.domain;
        tr.dataset.rule = s.rule;
        tr.appendChild(el('td', s.domain));
        tr.appendChild(el('td', s.rule, 'mono'));
        row = chartCells(tr, s.domain + ' ' + s.rule);
        body.appendChild(tr);
        state.seriesRows.set(id, row);
      }
      updateRow(row, state.history.get(id), counts.get(id));
    }
    for (const [id, row] of state.seriesRows) {
      if (!present.has(id)) {
        row.tr.remove();
        state.seriesRows.delete(id);
      }
    }
    $('other-series').hidden = state.seriesRows.size === 0;
  }

  /** Appends the live cells (rates, chart, totals) to a row and returns them. */
  function chartCells(tr, name) {
    const admitted = el('td', '0', 'num admitted-rate');
    const denied = el('td', '0', 'num denied-rate');
    const chartCell = el('td', null, 'chart');
    const canvas = document.createElement('canvas');
    canvas.className = 'spark';
    canvas.setAttribute('role', 'img');
    chartCell.appendChild(canvas);
    const admittedTotal = el('td', '0', 'num admitted-total');
    const deniedTotal = el('td', '0', 'num denied-total');
    tr.append(admitted, denied, chartCell, admittedTotal, deniedTotal);
    return {tr, name, admitted, denied, canvas, admittedTotal, deniedTotal};
  }

  function updateRow(row, h, total) {
    h = h || {admitted: [], denied: [], shadow: []};
    const last = (a) => (a.length ? a[a.length - 1] : 0);
    const peak = (a) => (a.length ? Math.max.apply(null, a) : 0);
    row.admitted.textContent = rate(last(h.admitted));
    row.denied.textContent = rate(last(h.denied));
    row.admittedTotal.textContent = String(total ? total.admitted : 0);
    row.deniedTotal.textContent = String(total ? total.denied : 0);
    const c = row.canvas;
    c.dataset.admitted = h.admitted.map(rate).join(',');
    c.dataset.denied = h.denied.map(rate).join(',');
    c.dataset.shadow = h.shadow.map(rate).join(',');
    let label = row.name + ': now ' + rate(last(h.admitted)) + ' admitted and ' + rate(last(h.denied))
        + ' denied per second; peak over the last minute ' + rate(peak(h.admitted)) + ' admitted, '
        + rate(peak(h.denied)) + ' denied per second';
    if (peak(h.shadow) > 0) {
      label += ', ' + rate(peak(h.shadow)) + ' shadow-mode denials per second';
    }
    c.setAttribute('aria-label', label);
    draw(c, h);
  }

  function draw(canvas, h) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 180;
    const ht = canvas.clientHeight || 36;
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(ht * ratio)) {
      canvas.width = Math.round(w * ratio);
      canvas.height = Math.round(ht * ratio);
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, ht);
    const max = Math.max(1, ...h.admitted, ...h.denied, ...h.shadow);
    const step = w / (HISTORY - 1);
    const line = (values, color) => {
      if (values.length === 0) {
        return;
      }
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      const offset = HISTORY - values.length;
      values.forEach((v, i) => {
        const x = (offset + i) * step;
        const y = ht - 1.5 - (v / max) * (ht - 4);
        if (i === 0) {
          ctx.moveTo(x, y);
        } else {
          ctx.lineTo(x, y);
        }
      });
      ctx.stroke();
    };
    line(h.admitted, COLORS.admitted);
    line(h.denied, COLORS.denied);
    if (h.shadow.some((v) => v > 0)) {
      line(h.shadow, COLORS.shadow);
    }
    ctx.fillStyle = '#666';
    ctx.font = '10px sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillText(rate(max) + '/s', 2, 1);
  }

  // ---- the check-only form

  $('try-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const status = $('try-status');
    const out = $('try-answer');
    const entries = [];
    for (const line of $('try-entries').value.split('\n')) {
      const t = line.trim();
      if (!t) {
        continue;
      }
      const eq = t.indexOf('=');
      entries.push(eq < 0 ? {key: t, value: ''} : {key: t.slice(0, eq).trim(), value: t.slice(eq + 1).trim()});
    }
    const request = {domain: $('try-domain').value.trim(), hits: 0, descriptors: [{entries: entries}]};
    status.textContent = 'asking…';
    out.textContent = '';
    try {
      const answer = await fetch('v1/check', {
        method: 'POST',
        headers: headers({'Content-Type': 'application/json'}),
        body: JSON.stringify(request),
        cache: 'no-store',
      });
      const text = await answer.text();
      let shown = text;
      let summary = '';
      try {
        const json = JSON.parse(text);
        shown = JSON.stringify(json, null, 2);
        summary = json.overall_code || json.title || '';
      } catch (e) {
        // not JSON: shown as it came
      }
      status.textContent = answer.status + ' ' + summary;
      status.dataset.status = String(answer.status);
      out.textContent = shown;
      if (answer.status === 401) {
        askForToken('The service asks for a token.');
      }
    } catch (e) {
      status.textContent = 'cannot reach the service: ' + e.message;
    }
  });

  poll();
})();
