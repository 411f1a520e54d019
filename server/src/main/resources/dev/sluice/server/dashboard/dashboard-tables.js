// Sluice's dashboard, its tables: the DOM helpers both scripts use and the tables drawn from one poll of
// GET v1/dashboard (the top denied keys, reservations and settles by rule, slot steps by domain, the store's
// health). dashboard.js polls and draws the rules and their charts; it loads after this file (both defer).
//
// Everything the service sends goes into the page with textContent or an attribute set through the DOM, never as
// markup (see dashboard.js).
'use strict';
window.SluiceTables = (function () {
  const SHOWN_KEY_CHARS = 120;

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

  function rate(v) {
    if (v >= 100) {
      return String(Math.round(v));
    }
    return String(Math.round(v * 10) / 10);
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

  return {el, seriesId, rate, renderTopKeys, renderSettles, renderInFlight, renderStore};
})();
