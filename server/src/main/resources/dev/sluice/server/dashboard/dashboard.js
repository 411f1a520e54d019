// Sluice's dashboard: polls GET v1/dashboard every second and shows the rules, decisions per second by rule, the top
// denied keys of the last minute, reservations and settles by rule, slot steps by domain and the store's health; the form checks a descriptor with hits: 0 through
// POST v1/check. No framework, no build step.
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
  const SHOWN_KEY_CHARS = 120;
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

  function el(tag, text, className) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    if (className) {
      e.className = className;
    }
    return e;
  }

  function seriesId(domain, rule) {
    return domain + '\u0000' + rule;
  }

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const token = sessionStorage.getItem(TOKEN);
    if (token) {
      h.Authorization = 'Bearer ' + token;
    }
    return h;
  }

  function rate(v) {
    if (v >= 100) {
      return String(Math.round(v));
    }
    return String(Math.round(v * 10) / 10);
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

  function renderTopKeys(top) {
    $('top-window').textContent = 'over the last minute (' + top.denials + ' denial(s), in steps of '
        + top.step_seconds + ' s)';
    const body = $('top-keys-body');
    body.replaceChildren();
    top.keys.forEach((k, i) => {
      const tr = document.createElement('tr');
      tr.dataset.count = String(k.count);
      tr.appendChild(el('td', i + 1, 'num'));
      const shown = k.key.length > SHOWN_KEY_CHARS ? k.key.slice(0, SHOWN_KEY_CHARS) + '…' : k.key;
      const keyCell = el('td', shown, 'mono key');
      keyCell.title = k.key;
      tr.appendChild(keyCell);
      const exact = k.lower === k.count && k.upper === k.count;
      const countCell = el('td', exact ? k.count : '≈ ' + k.count, 'num');
      if (!exact) {
        countCell.title = 'between ' + k.lower + ' and ' + k.upper;
      }
      tr.appendChild(countCell);
      tr.appendChild(el('td', top.denials ? Math.round((1000 * k.count) / top.denials) / 10 + '%' : '', 'num'));
      body.appendChild(tr);
    });
    // "no denials" is said only from data: before the first answer the page says it is waiting
    $('top-waiting').hidden = true;
    $('top-empty').hidden = top.keys.length > 0;
  }

  // a rate from this poll's total and the previous poll's (none before the second poll)
  function rateSince(now, before, seconds) {
    return seconds > 0 && before !== undefined ? rate(Math.max(0, (now - before) / seconds)) : '—';
  }

  // one row per rule with a reservation or a settle; returns the settles' totals by rule for the next poll
  function renderSettles(rows, prev, seconds) {
    const totals = new Map();
    const body = $('settles-body');
    body.replaceChildren();
    for (const r of rows) {
      const id = seriesId(r.domain, r.rule);
      const settled = r.charged_more + r.gave_back + r.at_estimate + r.not_pending;
      totals.set(id, settled);
      const tr = document.createElement('tr');
      tr.dataset.domain = r.domain;
      tr.dataset.rule = r.rule;
      tr.append(el('td', r.domain), el('td', r.rule, 'mono'), el('td', r.reserved, 'num'), el('td', r.denied, 'num'),
          el('td', rateSince(settled, prev && prev.settles ? prev.settles.get(id) : undefined, seconds), 'num'),
          el('td', r.charged_more, 'num'), el('td', r.gave_back, 'num'), el('td', r.at_estimate, 'num'),
          el('td', r.not_pending, 'num'), el('td', r.charged_more_permits, 'num'),
          el('td', r.given_back_permits, 'num'));
      body.appendChild(tr);
    }
    $('settles').hidden = rows.length === 0;
    $('settles-empty').hidden = rows.length > 0;
    return totals;
  }

  // one row per domain with slot steps; returns the acquisitions and denials by domain for the next poll
  function renderInFlight(rows, prev, seconds) {
    const totals = new Map();
    const body = $('in-flight-body');
    body.replaceChildren();
    for (const r of rows) {
      totals.set(r.domain, {acquired: r.acquired, denied: r.denied});
      const before = prev && prev.inFlight ? prev.inFlight.get(r.domain) : undefined;
      const tr = document.createElement('tr');
      tr.dataset.domain = r.domain;
      tr.append(el('td', r.domain),
          el('td', rateSince(r.acquired, before && before.acquired, seconds), 'num'),
          el('td', rateSince(r.denied, before && before.denied, seconds), 'num'),
          el('td', r.acquired, 'num'), el('td', r.denied, 'num'), el('td', r.released, 'num'),
          el('td', r.renewed, 'num'), el('td', r.release_not_held + r.renew_not_held, 'num'));
      body.appendChild(tr);
    }
    $('in-flight').hidden = rows.length === 0;
    $('in-flight-empty').hidden = rows.length > 0;
    return totals;
  }

  function renderStore(store, prev, seconds) {
    $('store-name').textContent = store.name;
    const healthy = $('store-healthy');
    healthy.textContent = store.healthy ? 'yes'
        : 'no (' + store.cause + '): ' + (store.opened ? 'its circuit is open' : 'not opened since the start')
          + ', ' + store.failure_policy + ' decides until it answers';
    healthy.className = store.healthy ? 'ok' : 'error';
    $('store-policy').textContent = store.failure_policy
        || 'none needed: the store is in this process';
    const table = $('degraded');
    table.hidden = !store.degraded;
    if (!store.degraded) {
      return;
    }
    const body = $('degraded-body');
    body.replaceChildren();
    for (const [cause, n] of Object.entries(store.degraded)) {
      const before = prev && prev.degraded ? prev.degraded[cause] || 0 : n;
      const tr = document.createElement('tr');
      tr.dataset.cause = cause;
      tr.append(el('td', cause), el('td', n, 'num'),
          el('td', seconds > 0 ? rate(Math.max(0, (n - before) / seconds)) : '—', 'num'));
      body.appendChild(tr);
    }
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
