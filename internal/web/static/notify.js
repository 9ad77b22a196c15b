// notify.js is the dashboard's Notifications page: notification targets
// (addNotifier, getNotifiers, testNotifier, deleteNotifier) and the new
// matches of saved searches (getUserSearches, getSearchResults?id=N), with
// "Snipe this". It uses the helpers app.js exposes as window.SnipedApp.
'use strict';

(() => {
  const app = window.SnipedApp;
  if (!app) return;
  const { call, h, money, parseUTC, dateTime, describe, showError, notify, openEditor } = app;
  const $ = id => document.getElementById(id);
  const EVENTS = [
    ['snipe.won', 'Won'], ['snipe.lost', 'Lost (with the reason)'], ['snipe.warning', 'Maximum can no longer win'],
    ['snipe.placed', 'Bid placed'], ['search.match', 'New search matches'], ['market.link_broken', 'Marketplace link broken'],
  ];

  // eventLabel names an event type as the form's checkboxes do.
  const eventLabel = type => (EVENTS.find(([t]) => t === type) || [type, type])[1];
  const when = s => { const t = parseUTC(s); return Number.isFinite(t) ? dateTime.format(t) : ''; };

  // ---- targets --------------------------------------------------------------

  async function loadTargets() {
    let body;
    try {
      body = await call('getNotifiers');
    } catch (err) {
      if (err.status !== 401) showError(err);
      return;
    }
    const list = body.notifiers || [];
    const disabled = list.filter(n => !+n.enabled);
    $('notify-flag').hidden = disabled.length === 0;
    $('notify-disabled').hidden = disabled.length === 0;
    $('notify-disabled').textContent = disabled.map(n =>
      `Target ${n.id} (${n.url}) was disabled on ${when(n.disabled_at)}: ${n.disabled_reason.replace(/\.?$/, '.')} Fix the receiver, then choose Test to turn it back on.`).join(' ');
    $('notify-empty').hidden = list.length > 0;
    $('notify-targets').replaceChildren(...list.map(targetRow));
  }

  function targetRow(n) {
    const all = n.events.length === EVENTS.length;
    const status = !+n.enabled
      ? h('span', { class: 'badge red' }, 'Disabled')
      : { never: h('span', { class: 'badge gray' }, 'Not used yet'), delivered: h('span', { class: 'badge green' }, 'Delivered'),
        retrying: h('span', { class: 'badge orange' }, 'Retrying'), failed: h('span', { class: 'badge red' }, 'Failed') }[n.last_status] || n.last_status;
    const test = h('button', { type: 'button', class: 'btn small', onclick: e => testTarget(n.id, e.currentTarget) }, 'Test');
    const del = h('button', { type: 'button', class: 'btn small danger', onclick: e => deleteTarget(n.id, e.currentTarget) }, 'Delete');
    return h('tr', { dataset: { target: n.id } },
      h('td', {}, h('span', { class: 'url' }, n.url), h('span', { class: 'muted small status-line' }, `#${n.id} · ${n.kind === 'webhook' ? 'signed webhook' : 'service (shoutrrr)'}`)),
      h('td', { class: 'small' }, all ? 'all events' : n.events.map(eventLabel).join(', ')),
      h('td', {}, status,
        n.last_attempt_at ? h('span', { class: 'muted small status-line' }, when(n.last_attempt_at)) : null,
        n.last_error ? h('span', { class: 'small status-line error-text' }, n.last_error) : null),
      h('td', { class: 'actions' }, test, ' ', del));
  }

  async function addTarget(e) {
    e.preventDefault();
    const url = $('notify-url').value.trim();
    const err = $('notify-error');
    const picked = [...document.querySelectorAll('#notify-events input:checked')].map(c => c.value);
    if (!url) { err.textContent = 'Target URL: paste a webhook or service URL.'; $('notify-url').focus(); return; }
    if (!picked.length) { err.textContent = 'Events: choose at least one.'; return; }
    err.textContent = '';
    $('notify-add').disabled = true;
    try {
      const params = { url };
      if (picked.length < EVENTS.length) params.events = picked.join(',');
      const body = await call('addNotifier', params);
      $('notify-url').value = '';
      showSecret(body);
      notify(`Target ${body.id} added.`);
      loadTargets();
    } catch (e2) {
      if (e2.status !== 401) err.textContent = describe(e2);
      $('notify-url').focus();
    } finally {
      $('notify-add').disabled = false;
    }
  }

  // showSecret shows a webhook's signing secret: the only time it is shown.
  function showSecret(body) {
    const box = $('notify-secret');
    if (!body.secret) { box.hidden = true; return; }
    box.hidden = false;
    box.replaceChildren(
      h('p', { class: 'small' }, h('strong', {}, `Signing secret of target ${body.id}, shown only now. `),
        'Keep it with your receiver: every webhook carries X-Sniped-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> with this key.'),
      h('code', { id: 'notify-secret-value' }, body.secret), ' ',
      h('button', { type: 'button', class: 'btn ghost small', onclick: () => copy(body.secret) }, 'Copy'),
      h('button', { type: 'button', class: 'btn ghost small', onclick: () => { box.hidden = true; box.replaceChildren(); } }, 'I have saved it'));
  }

  async function copy(text) {
    try {
      await navigator.clipboard.writeText(text);
      notify('Secret copied.');
    } catch (e) {
      const r = document.createRange();
      r.selectNodeContents($('notify-secret-value'));
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      notify('Secret selected: press Ctrl+C (⌘C) to copy.', 'orange');
    }
  }

  async function testTarget(id, btn) {
    btn.disabled = true;
    btn.textContent = 'Testing…';
    try {
      const body = await call('testNotifier', { id });
      notify(body.message, +body.delivered ? 'green' : 'orange');
      loadTargets();
    } catch (err) {
      if (err.status !== 401) showError(err);
    } finally {
      btn.disabled = false;
      btn.textContent = 'Test';
    }
  }

  async function deleteTarget(id, btn) {
    if (btn.dataset.confirm !== '1') { // two steps instead of a modal confirm
      btn.dataset.confirm = '1';
      btn.textContent = 'Confirm delete';
      setTimeout(() => { btn.dataset.confirm = ''; btn.textContent = 'Delete'; }, 4000);
      return;
    }
    try {
      const body = await call('deleteNotifier', { id });
      notify(body.message);
      loadTargets();
    } catch (err) {
      if (err.status !== 401) showError(err);
    }
  }

  // ---- recent events ------------------------------------------------------------

  const EVENT_HEADS = {
    'snipe.placed': ['Bid placed', 'blue'], 'snipe.won': ['Won', 'green'], 'snipe.lost': ['Lost', 'red'],
    'snipe.warning': ['Raise your maximum', 'orange'], 'search.match': ['New matches', 'blue'],
    'market.link_broken': ['Marketplace link broken', 'red'],
  };

  async function loadEvents() {
    let body;
    try {
      body = await call('getEvents', { limit: 20 });
    } catch (err) {
      if (err.status !== 401) showError(err);
      return;
    }
    const list = body.events || [];
    $('events-empty').hidden = list.length > 0;
    $('events').replaceChildren(...list.map(e => {
      const [head, color] = EVENT_HEADS[e.type] || [e.type, 'gray'];
      const d = e.data || {};
      let what;
      if (e.type === 'search.match') {
        what = h('span', {}, `${(d.items || []).length} new item${(d.items || []).length === 1 ? '' : 's'} for “${d.query}”: `,
          (d.items || []).slice(0, 5).map(it => h('button', { type: 'button', class: 'link', title: 'Snipe this',
            onclick: () => openEditor(it.item_no, { item_no: it.item_no, title: it.title, currentPrice: it.current_price, minimumToBid: it.minimum_to_bid, currency: it.currency, endTime: it.end_time, galleryUrl: it.gallery_url }) }, it.title)));
      } else {
        what = h('span', {}, h('strong', {}, d.title || `Item ${d.item_no}`), ` #${d.item_no} · `, d.message || '', d.detail ? ` ${d.detail}` : '');
      }
      return h('li', { dataset: { event: e.id, type: e.type } },
        h('span', { class: `badge ${color}` }, head), ' ', what,
        h('span', { class: 'muted small status-line' }, when(e.created_at)));
    }));
  }

  // ---- new matches ------------------------------------------------------------

  async function loadMatches() {
    let body;
    try {
      body = await call('getUserSearches');
    } catch (err) {
      if (err.status !== 401) showError(err);
      return;
    }
    const searches = body.searches || [];
    $('matches-note').textContent = searches.length
      ? 'Each saved search runs on a schedule and notifies your targets of items listed since it was saved. Items first seen in the last 24 hours are marked New.'
      : 'No saved searches yet: save one under Search, and new listings that match it show here.';
    $('matches').replaceChildren(...searches.map(s => {
      const box = h('div', { class: 'match-list' });
      const run = h('button', { type: 'button', class: 'btn small', onclick: () => showMatches(s, box, run) }, 'Show matches');
      const group = h('section', { class: 'match-group', dataset: { search: s.id } },
        h('h3', {}, `“${s.query}”`, ' ', +s.new_count ? h('span', { class: 'badge blue' }, `${s.new_count} new`) : null),
        h('p', { class: 'muted small' }, s.last_run ? `Last run ${when(s.last_run)}; next ${when(s.next_run)}. ` : 'Not run yet. ', run),
        box);
      // Not shown by itself: getSearchResults?id=N runs the search (a
      // marketplace call), and that run would reset new_count, so merely
      // opening the page would clear the badge.
      return group;
    }));
  }

  async function showMatches(s, box, btn) {
    btn.disabled = true;
    try {
      const body = await call('getSearchResults', { id: s.id });
      const items = (body.items || []).slice().sort((a, b) => (+b.new || 0) - (+a.new || 0));
      if (!items.length) { box.replaceChildren(h('p', { class: 'muted small' }, 'No live listings match right now.')); return; }
      box.replaceChildren(h('table', { class: 'items results' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Item'), h('th', { scope: 'col', class: 'num' }, 'Price'),
          h('th', { scope: 'col', class: 'num' }, 'Minimum'), h('th', { scope: 'col' }, 'Ends'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Action')))),
        h('tbody', {}, items.map(it => {
          const end = parseUTC(it.endTime);
          return h('tr', { dataset: { item: it.item_no }, class: +it.new ? 'new-match' : '' },
            h('td', { class: 'item-cell' },
              it.galleryUrl ? h('img', { src: it.galleryUrl, alt: '', width: 40, height: 40, loading: 'lazy' }) : h('span', { class: 'thumb' }),
              h('span', { class: 'item-text' }, h('span', {}, it.title, ' ', +it.new ? h('span', { class: 'badge blue' }, 'New') : null),
                h('span', { class: 'muted small' }, `#${it.item_no}`))),
            h('td', { class: 'num', 'data-label': 'Price' }, money(it.currentPrice, it.currency)),
            h('td', { class: 'num', 'data-label': 'Minimum' }, money(it.minimumToBid, it.currency)),
            h('td', { 'data-label': 'Ends' }, Number.isFinite(end) ? h('span', { class: 'countdown', dataset: { end }, title: dateTime.format(end) }) : it.timeLeft),
            h('td', { class: 'status-cell' }, h('button', { type: 'button', class: 'btn small snipe-this', onclick: () => openEditor(it.item_no, it) }, 'Snipe this')));
        }))));
      app.tick();
    } catch (err) {
      if (err.status !== 401) showError(err);
    } finally {
      btn.disabled = false;
    }
  }

  // ---- wiring -------------------------------------------------------------------

  $('notify-events').append(...EVENTS.map(([value, label]) =>
    h('label', {}, h('input', { type: 'checkbox', value, checked: true }), label)));
  $('notify-form').addEventListener('submit', addTarget);
  // Connecting checks for disabled targets (the nav flag), and so does a
  // timer while connected; opening the page loads it.
  const FLAG_POLL_MS = 5 * 60000;
  let flagTimer = 0;
  document.addEventListener('sniped:connected', () => {
    loadTargets();
    clearInterval(flagTimer);
    flagTimer = setInterval(loadTargets, FLAG_POLL_MS);
  });
  document.addEventListener('sniped:signedout', () => clearInterval(flagTimer));
  document.addEventListener('sniped:view', e => {
    if (e.detail === 'notify') { loadTargets(); loadEvents(); loadMatches(); }
  });
})();
