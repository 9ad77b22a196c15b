// app.js is the dashboard. It calls the public interface operations with
// GET and the key in an Authorization: Bearer header, like any other
// client, so the key stays out of URLs and logs; it lives in sessionStorage
// only.
'use strict';

(() => {
  // The interface lives at the part of this page's URL before /ui/, so a
  // --base-path prefix needs no configuration.
  const BASE = location.pathname.replace(/\/ui(\/[^/]*)?$/, '');
  const KEY_STORAGE = 'sniped.key';
  const DEFAULT_DELAY = 7;
  const DETAIL_POLL_MS = 20000; // while the auction runs
  const SETTLE_POLL_MS = 3000; // after the end, until the outcome is final
  const SETTLE_WATCH_MS = 5 * 60000;
  // Outcome codes that no later event changes: everything but Pending (0),
  // Bid Placed (2) and Group Item May Be Won (-15).
  const FINAL = /^(?!(0|2|-15)$)-?\d+$/;
  const $ = id => document.getElementById(id);

  const state = {
    key: sessionStorage.getItem(KEY_STORAGE) || '',
    view: 'snipes',
    tab: 'current', orderby: 'ends', dir: 'ASC', offset: 0, limit: 20, showWon: true,
    total: 0,
    entries: new Map(), // item_no -> last getUserItems entry or addBid answer
    groups: new Set(),
    selected: null, // item_no of the open item
    detail: null, // {item, result, snipe}
    detailTimers: [],
    skew: 0, // server time minus browser time, ms
    editing: null, // item_no being edited, null when adding
  };

  // ---- interface calls ----------------------------------------------------

  class ApiError extends Error {
    constructor(status, body, retryAfter) {
      super((body && body.message) || `HTTP ${status}`);
      this.status = status;
      this.code = (body && body.error) || '';
      this.param = (body && body.param) || '';
      this.retryAfter = retryAfter;
    }
  }

  async function call(op, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null) q.set(k, String(v));
    }
    let res;
    try {
      res = await fetch(`${BASE}/${op}?${q}`, { cache: 'no-store', credentials: 'omit', headers: { Accept: 'application/json', Authorization: `Bearer ${state.key}` } });
    } catch (e) {
      throw new ApiError(0, { error: 'network', message: 'Cannot reach sniped. Check that the service is running, then try again.' });
    }
    let body = null;
    try { body = await res.json(); } catch (e) { /* not JSON: handled below */ }
    if (!res.ok || !body || body.status === 'ERROR') {
      const err = new ApiError(res.status, body || { message: `sniped answered HTTP ${res.status}.` }, res.headers.get('Retry-After'));
      if (res.status === 401) signOut(describe(err));
      throw err;
    }
    return body;
  }

  // describe turns an interface error into a sentence for the user.
  function describe(err) {
    if (!(err instanceof ApiError)) return `Something went wrong in the page: ${err.message}`;
    switch (err.code) {
      case 'missing_key':
      case 'invalid_key':
        return 'That key was not accepted. Paste the key sniped printed (sniped account rotate-key prints a new one).';
      case 'upgrade_required':
        return 'This account is on the free tier, and the interface needs the paid tier. The operator can run: sniped account set-tier --name NAME --tier paid.';
      case 'rate_limited': {
        const s = parseInt(err.retryAfter, 10);
        return `Too many requests for this key. Try again in ${Number.isFinite(s) ? s + ' second' + (s === 1 ? '' : 's') : 'a moment'}.`;
      }
      case 'conflict':
        return `Not changed: ${err.message}`;
    }
    let msg = err.message || `Request failed (HTTP ${err.status}).`;
    // The interface says "pass force=1"; here that is the Force box.
    if (err.code === 'invalid_parameter' && err.param === 'bid' && /force=1/.test(msg)) {
      msg = msg.replace(/,? ?or pass force=1 to store it as given/, '') +
        '. To store it anyway, open Advanced and tick Force (it will probably lose).';
    }
    // Name the page's control, not the interface's parameter.
    const label = CONTROL_LABELS[err.param];
    return label && msg.startsWith(err.param + ' ') ? label + msg.slice(err.param.length) : msg;
  }

  // CONTROL_LABELS are the page's names for the interface's parameters.
  const CONTROL_LABELS = {
    item_no: 'Item number', bid: 'Maximum bid', delay: 'Seconds before the end', groupName: 'Bid Group',
    query: 'Search text', country_code: 'Country', url: 'Target URL', events: 'Events',
  };

  // arrayIn finds the list in an answer whose field name the spec leaves open.
  function arrayIn(body, names) {
    if (Array.isArray(body)) return body;
    for (const n of names) if (Array.isArray(body[n])) return body[n];
    for (const v of Object.values(body)) if (Array.isArray(v)) return v;
    return [];
  }

  // ---- formatting ---------------------------------------------------------

  // parseUTC reads the interface's "YYYY-MM-DD HH:MM:SS" (always UTC).
  function parseUTC(s) {
    const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(s || '');
    return m ? Date.UTC(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
  }

  const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  const shortTime = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

  function money(v, currency) {
    const n = typeof v === 'number' ? v : parseFloat(v);
    if (!Number.isFinite(n)) return '–';
    return BidChart.amountFormatter(currency)(n);
  }

  // countdown formats ms as "2d 03h", "1h 08m 32s", "17m 05s" or "32s".
  function countdown(ms) {
    let s = Math.max(0, Math.floor(ms / 1000));
    const d = Math.floor(s / 86400); s %= 86400;
    const h = Math.floor(s / 3600); s %= 3600;
    const m = Math.floor(s / 60); s %= 60;
    const p = n => String(n).padStart(2, '0');
    if (d) return `${d}d ${p(h)}h`;
    if (h) return `${h}h ${p(m)}m ${p(s)}s`;
    if (m) return `${m}m ${p(s)}s`;
    return `${s}s`;
  }

  const now = () => Date.now() + state.skew;

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  function badge(color, text, title) {
    const known = ['green', 'red', 'orange', 'blue', 'gray'];
    return h('span', { class: `badge ${known.includes(color) ? color : 'gray'}`, title }, text || 'Pending');
  }

  // ---- messages -----------------------------------------------------------

  function showError(err) {
    const text = typeof err === 'string' ? err : describe(err);
    $('alert-text').textContent = text;
    $('alert').hidden = false;
  }

  function clearError() { $('alert').hidden = true; }

  function notify(text, tone) {
    const n = h('div', { class: `notice ${tone || 'green'}` }, text);
    $('notices').append(n);
    setTimeout(() => n.remove(), 5000);
  }

  // ---- session ------------------------------------------------------------

  function signOut(message) {
    state.key = '';
    sessionStorage.removeItem(KEY_STORAGE);
    document.dispatchEvent(new Event('sniped:signedout')); // market.js
    closeDetail();
    show('connect');
    $('connect-error').textContent = message || '';
    $('key-input').value = '';
    $('key-input').focus();
  }

  async function connect(key) {
    state.key = key;
    const body = await call('justTesting', { arg1: 'dashboard' });
    const server = parseUTC(body.timestamp);
    // The timestamp has whole seconds; only correct a clearly wrong clock.
    const skew = Number.isFinite(server) ? server + 500 - Date.now() : 0;
    state.skew = Math.abs(skew) > 2000 ? skew : 0;
    sessionStorage.setItem(KEY_STORAGE, key);
    document.dispatchEvent(new Event('sniped:connected')); // market.js
    $('connect-error').textContent = '';
    show(state.view);
    clearError();
    loadList();
    loadSearches();
  }

  function show(view) {
    const connected = view !== 'connect';
    $('connect').hidden = connected;
    $('nav').hidden = !connected;
    $('session').hidden = !connected;
    for (const sec of document.querySelectorAll('main > section[id^="view-"]')) sec.hidden = sec.id !== `view-${view}`;
    if (connected) {
      state.view = view;
      for (const b of document.querySelectorAll('.view-btn')) {
        if (b.dataset.view === view) b.setAttribute('aria-current', 'page'); else b.removeAttribute('aria-current');
      }
      document.dispatchEvent(new CustomEvent('sniped:view', { detail: view }));
    }
  }

  // ---- snipe list ---------------------------------------------------------

  async function loadList() {
    const tbody = $('items');
    tbody.setAttribute('aria-busy', 'true');
    try {
      const body = await call('getUserItems', {
        filter: state.tab, orderby: state.orderby, dir: state.dir,
        offset: state.offset, limit: state.limit, show_won: state.showWon ? 1 : 0,
      });
      const items = arrayIn(body, ['items', 'snipes', 'results']);
      state.total = Number.isFinite(+body.total) ? +body.total : items.length;
      if (items.length === 0 && state.offset > 0 && state.total > 0) { // the page emptied under us
        state.offset = Math.max(0, Math.floor((state.total - 1) / state.limit) * state.limit);
        return loadList();
      }
      renderList(items);
    } catch (err) {
      if (err.status !== 401) showError(err);
    } finally {
      tbody.removeAttribute('aria-busy');
    }
  }

  function renderList(items) {
    const ended = state.tab === 'completed' || state.tab === 'archive';
    const head = $('items').closest('table').tHead.rows[0].cells;
    head[1].textContent = ended ? 'Final price' : 'Price';
    head[4].textContent = ended ? 'Ended' : 'Ends';
    const rows = items.map(it => {
      const no = String(it.item_no);
      state.entries.set(no, it);
      if (it.groupName) state.groups.add(it.groupName);
      const end = parseUTC(it.endTime);
      const bid = parseFloat(it.bid);
      return h('tr', { dataset: { item: no }, class: no === state.selected ? 'selected' : '' },
        h('td', { class: 'item-cell' },
          it.galleryUrl ? h('img', { src: it.galleryUrl, alt: '', width: 40, height: 40, loading: 'lazy' }) : h('span', { class: 'thumb' }),
          h('span', { class: 'item-text' },
            h('button', { type: 'button', class: 'link open-item', onclick: () => openItem(no) }, it.title || `Item ${no}`),
            h('span', { class: 'muted small' }, `#${no}`, it.groupName ? h('span', { class: 'group' }, it.groupName) : null,
              it.enabled === 0 || it.enabled === false || it.enabled === '0' ? h('span', { class: 'off' }, 'off') : null))),
        h('td', { class: 'num', 'data-label': ended ? 'Final price' : 'Price' }, money(it.currentPrice, it.currency)),
        h('td', { class: 'num', 'data-label': 'Bids' }, it.bids ?? '–'),
        h('td', { class: 'num', 'data-label': 'Your bid' }, bid > 0 ? money(bid, it.currency) : h('span', { class: 'muted' }, 'watch')),
        h('td', { 'data-label': ended ? 'Ended' : 'Ends' }, !Number.isFinite(end) ? (it.timeLeft || '–')
          : ended ? h('time', { class: 'ended-at', datetime: new Date(end).toISOString() }, dateTime.format(end))
            : h('span', { class: 'countdown', dataset: { end }, title: dateTime.format(end) }, '')),
        h('td', { class: 'status-cell' }, watching(it, it) ? badge('gray', 'Watching', 'watched item: no bid') : badge(it.color, it.status, it.shorthand)));
    });
    $('items').replaceChildren(...rows);
    const empty = {
      watched: 'Nothing on your watch list. Add an item with bid 0, or import your marketplace watch list.',
      current: 'No pending snipes. Add one, or find an item under Search.',
      completed: 'No snipes ended in the last 60 days.',
      archive: 'No snipes older than 60 days.',
    }[state.tab];
    $('items-empty').hidden = items.length > 0;
    $('items-empty').textContent = empty;
    const from = items.length ? state.offset + 1 : 0;
    $('page-info').textContent = `${from}–${state.offset + items.length} of ${state.total}`;
    $('prev-btn').disabled = state.offset === 0;
    $('next-btn').disabled = state.offset + items.length >= state.total;
    $('items-caption').textContent = `${state.tab} snipes`;
    $('group-names').replaceChildren(...[...state.groups].sort().map(g => h('option', { value: g })));
    tick();
  }

  function selectTab(tab, focus) {
    state.tab = tab;
    state.offset = 0;
    for (const t of document.querySelectorAll('.tab')) {
      const on = t.dataset.tab === tab;
      t.setAttribute('aria-selected', on);
      t.tabIndex = on ? 0 : -1;
      if (on && focus) t.focus();
    }
    loadList();
  }

  // ---- item detail --------------------------------------------------------

  async function openItem(no, scroll = true) {
    no = String(no);
    const changed = state.selected !== no;
    state.selected = no;
    for (const tr of document.querySelectorAll('#items tr')) tr.classList.toggle('selected', tr.dataset.item === no);
    $('detail').hidden = false;
    if (changed) {
      $('detail-title').textContent = `Item ${no}`;
      $('detail-sub').textContent = 'Loading…';
      $('chart').replaceChildren();
      $('chart-legend').replaceChildren();
      $('facts').replaceChildren();
      $('badge').replaceWith(Object.assign(badge('gray', '…'), { id: 'badge' }));
      $('outcome-msg').textContent = '';
      if (scroll) { // a user opened it: take keyboard focus there too
        $('detail-title').focus({ preventScroll: true });
        if (window.matchMedia('(max-width: 900px)').matches) $('detail').scrollIntoView({ behavior: 'smooth' });
      }
    }
    await refreshDetail();
  }

  async function refreshDetail() {
    const no = state.selected;
    if (!no) return;
    for (const t of state.detailTimers) clearTimeout(t);
    state.detailTimers = [];
    let item, status, datasets;
    try {
      [item, status, datasets] = await Promise.all([
        call('fetchItem', { item_no: no }),
        call('checkSnipeStatus', { item_no: no }),
        call('getBidHistoryDataset', { item_no: no }),
      ]);
    } catch (err) {
      if (state.selected !== no) return;
      if (err.status === 404) {
        showError(`Item ${no} is not in this account (any more).`);
        closeDetail();
      } else if (err.status !== 401) {
        showError(err);
      }
      return;
    }
    if (state.selected !== no) return; // another item was opened meanwhile
    const snipe = state.entries.get(no) || null;
    state.detail = { item, result: status.bidResult || {}, snipe, datasets };
    renderDetail();
    schedule();
  }

  // schedule refreshes the open item just after its shot and its end, and
  // now and then while it runs, so the outcome and chart follow the auction.
  function schedule() {
    const { item, snipe } = state.detail;
    const end = parseUTC(item.endTime || item.ends);
    const t = now();
    const at = [];
    if (Number.isFinite(end)) {
      const shot = shotTime(snipe, end);
      if (Number.isFinite(shot)) at.push(shot + 2500);
      at.push(end + 2500);
    }
    for (const when of at) {
      if (when > t) state.detailTimers.push(setTimeout(() => { refreshDetail(); loadList(); }, when - t));
    }
    if (!Number.isFinite(end) || end > t) {
      state.detailTimers.push(setTimeout(refreshDetail, DETAIL_POLL_MS));
    } else if (!FINAL.test(String(state.detail.result.success)) && t - end < SETTLE_WATCH_MS) {
      // Ended but not settled yet: the outcome follows within seconds.
      state.detailTimers.push(setTimeout(() => { refreshDetail(); loadList(); }, SETTLE_POLL_MS));
    }
  }

  function renderDetail() {
    const { item, result, snipe, datasets } = state.detail;
    const cur = item.currency;
    $('detail-title').textContent = item.title || `Item ${state.selected}`;
    $('detail-sub').textContent = `#${state.selected} · ${(item.category || '').split(':').join(' › ')}`;
    const pic = item.pictureURL || item.galleryUrl;
    $('detail-img').hidden = !pic;
    if (pic) $('detail-img').src = pic;

    if (watching(snipe, result)) {
      $('badge').replaceWith(Object.assign(badge('gray', 'Watching'), { id: 'badge' }));
      $('outcome-msg').textContent = 'On your watch list: no bid will be placed. Set a snipe to bid on this item.';
    } else {
      $('badge').replaceWith(Object.assign(badge(result.color, result.status), { id: 'badge' }));
      $('outcome-msg').textContent = result.message || '';
    }

    const bidAmount = snipe ? parseFloat(snipe.bid) : NaN;
    const fact = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
    const start = parseUTC(item.startTime), end = parseUTC(item.endTime || item.ends);
    $('facts').replaceChildren(...[
      fact('Current price', money(item.currentPrice, cur)),
      fact('Bids', item.bids ?? '–'),
      fact('Your maximum', snipe ? (bidAmount > 0 ? money(bidAmount, cur) : 'watching (bid 0)') : '–'),
      fact('Lead time', snipe && snipe.delay ? `${snipe.delay} s` : '–'),
      fact('Bid Group', snipe && snipe.groupName ? snipe.groupName : 'none'),
      fact('Enabled', snipe ? (isOn(snipe.enabled) ? 'yes' : 'no') : '–'),
      fact('Shipping', `${item.shippingType || '–'} · ${money(item.cost, cur)}`),
      fact('Seller', `${item.sellerUserId || '–'} (${item.sellerScore ?? '–'}, ${item.sellerPercent ?? '–'}%)`),
      fact('Country', item.country || '–'),
      fact('Started', Number.isFinite(start) ? dateTime.format(start) : '–'),
      fact('Ends', Number.isFinite(end) ? dateTime.format(end) : (item.ends || '–')),
    ].flat());
    if (item.message) $('facts').append(h('dt', {}, 'Note'), h('dd', {}, item.message));

    $('end-count').dataset.end = Number.isFinite(end) ? end : '';
    $('end-at').textContent = Number.isFinite(end) ? shortTime.format(end) : '';
    const shot = bidAmount > 0 ? shotTime(snipe, end) : NaN;
    $('shot-count').dataset.end = Number.isFinite(shot) ? shot : '';
    $('shot-at').textContent = Number.isFinite(shot) ? shortTime.format(shot) : (snipe && bidAmount > 0 ? '' : 'no snipe');
    $('edit-btn').textContent = snipe && bidAmount > 0 ? 'Edit snipe' : 'Set a snipe';

    drawChart();
    tick();
  }

  function drawChart() {
    if (!state.detail) return;
    const { item, datasets } = state.detail;
    BidChart.render($('chart'), datasets, item.currency, item.title);
    const legend = [];
    const [hist, line] = Array.isArray(datasets) ? datasets : [];
    const key = (cls, ds, text) => {
      const k = h('span', { class: `key ${cls}` }, h('span', { class: 'swatch', 'aria-hidden': 'true' }), text);
      if (typeof ds.borderColor === 'string') k.firstChild.style.borderTopColor = ds.borderColor;
      return k;
    };
    if (hist && hist.data && hist.data.length) legend.push(key('hist', hist, `${hist.data.length} bid${hist.data.length === 1 ? '' : 's'}`));
    if (line && line.label && line.data && line.data.some(p => p.y > 0)) legend.push(key('snipe', line, line.label));
    if (legend.length) legend.push(h('span', { class: 'muted' }, `times in ${Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time'}`));
    $('chart-legend').replaceChildren(...legend);
  }

  // shotTime is when the snipe is due: the sniper's fireTime when the list
  // gave it, else the end minus the lead time.
  function shotTime(snipe, end) {
    if (!snipe) return NaN;
    const fire = parseUTC(snipe.fireTime);
    if (Number.isFinite(fire)) return fire;
    return +snipe.delay ? end - snipe.delay * 1000 : NaN;
  }

  // watching is true for a watched item (bid 0) that has no outcome yet:
  // "Pending" would wrongly promise a bid.
  function watching(snipe, result) {
    return !!snipe && parseFloat(snipe.bid) === 0 && (!result || !+result.success);
  }

  function isOn(v) { return v === true || v === 1 || v === '1'; }

  function closeDetail() {
    for (const t of state.detailTimers) clearTimeout(t);
    state.detailTimers = [];
    state.selected = null;
    state.detail = null;
    $('detail').hidden = true;
    for (const tr of document.querySelectorAll('#items tr.selected')) tr.classList.remove('selected');
  }

  // tick updates every countdown on the page once a second.
  function tick() {
    const t = now();
    for (const e of document.querySelectorAll('.countdown')) {
      const end = +e.dataset.end;
      e.textContent = end > t ? countdown(end - t) : 'ended';
      e.classList.toggle('soon', end > t && end - t < 60000);
    }
    for (const [id, done] of [['shot-count', 'fired'], ['end-count', 'ended']]) {
      const e = $(id), end = e.dataset.end ? +e.dataset.end : NaN;
      if (!Number.isFinite(end)) { e.textContent = '–'; continue; }
      e.textContent = end > t ? countdown(end - t) : done;
      e.classList.toggle('soon', end > t && end - t < 60000);
    }
  }

  async function deleteSnipe(btn) {
    if (btn.dataset.confirm !== '1') { // two steps instead of a modal confirm
      btn.dataset.confirm = '1';
      btn.textContent = 'Confirm delete';
      setTimeout(() => { btn.dataset.confirm = ''; btn.textContent = 'Delete'; }, 4000);
      return;
    }
    btn.dataset.confirm = '';
    btn.textContent = 'Delete';
    const no = state.selected;
    try {
      const body = await call('deleteBid', { item_no: no });
      state.entries.delete(no);
      closeDetail();
      notify(body.message || `Deleted item ${no}.`);
      loadList();
    } catch (err) {
      if (err.status !== 401) showError(err);
    }
  }

  // ---- add / edit ---------------------------------------------------------

  // openEditor opens the add/edit dialog. item, when known (a search
  // result), fills the preview at once; otherwise it is looked up.
  function openEditor(no, item) {
    const entry = no ? state.entries.get(String(no)) : null;
    state.editing = entry ? String(no) : null;
    $('editor-title').textContent = entry ? `Edit snipe on #${no}` : 'Add snipe';
    $('ed-item').value = no || '';
    $('ed-item').readOnly = !!entry;
    // Never pre-fill the minimum as the maximum: it almost always loses.
    $('ed-bid').value = entry && parseFloat(entry.bid) > 0 ? entry.bid : '';
    showPreview(no && item && typeof item === 'object' ? item : null);
    if (no && !(item && typeof item === 'object')) lookupPreview(String(no));
    $('ed-delay').value = entry && entry.delay ? entry.delay : DEFAULT_DELAY;
    $('ed-group').value = entry ? entry.groupName || '' : '';
    $('ed-enabled').checked = entry ? isOn(entry.enabled) : true;
    $('ed-force').checked = entry ? isOn(entry.force) : false;
    $('ed-error').textContent = '';
    $('editor').showModal();
    (no ? $('ed-bid') : $('ed-item')).focus();
  }

  // ---- add-snipe preview ---------------------------------------------------

  let lookupTimer = 0, lookupSeq = 0;

  // showPreview shows an item's picture, title, price, minimum and time
  // left in the dialog, and the minimum as the bid field's hint; without
  // an item it shows the message, or a hint. The box keeps its height
  // (notify.css); data-state and data-item say what it shows.
  function showPreview(it, message) {
    const box = $('ed-preview');
    $('ed-bid').placeholder = it && +it.minimumToBid > 0 ? `at least ${(+it.minimumToBid).toFixed(2)}` : '0.00';
    if (!it) {
      box.dataset.state = 'message';
      box.dataset.item = '';
      box.replaceChildren(h('p', { class: 'muted small' }, message || 'Type an item number to see the item here.'));
      return;
    }
    const end = parseUTC(it.endTime);
    box.dataset.state = 'item';
    box.dataset.item = it.item_no;
    box.replaceChildren(
      it.galleryUrl ? h('img', { src: it.galleryUrl, alt: '', width: 64, height: 64 }) : h('span', { class: 'thumb' }),
      h('div', {},
        h('p', { class: 'preview-title', title: it.title || '' }, it.title || `Item ${it.item_no}`),
        h('dl', { class: 'preview-facts' },
          h('dt', {}, 'Price'), h('dd', { id: 'ed-price' }, money(it.currentPrice, it.currency)),
          h('dt', {}, 'Minimum to bid'), h('dd', { id: 'ed-minimum' }, money(it.minimumToBid, it.currency)),
          h('dt', {}, 'Time left'), h('dd', {}, +it.ended ? 'ended' : Number.isFinite(end) ? h('span', { class: 'countdown', dataset: { end } }, countdown(end - now())) : (it.timeLeft || '–')))));
  }

  // lookupPreview asks lookupItem about the typed item number; answers to
  // earlier keystrokes are dropped.
  async function lookupPreview(no) {
    const seq = ++lookupSeq;
    if (!/^[1-9][0-9]{0,18}$/.test(no)) { showPreview(null, no ? 'Item numbers are digits only.' : ''); return; }
    showPreview(null, 'Looking the item up…');
    try {
      const it = await call('lookupItem', { item_no: no });
      if (seq === lookupSeq) showPreview(it);
    } catch (err) {
      if (seq === lookupSeq && err.status !== 401) showPreview(null, err.status === 404 ? `The marketplace has no item ${no}.` : describe(err));
    }
  }

  async function saveSnipe(e) {
    e.preventDefault();
    const err = $('ed-error');
    const no = $('ed-item').value.trim();
    const bid = $('ed-bid').value.trim().replace(',', '.');
    if (!/^[1-9][0-9]*$/.test(no)) { err.textContent = 'Item number: enter the marketplace item number (digits only).'; $('ed-item').focus(); return; }
    if (bid !== '' && !/^[0-9]+(\.[0-9]{1,2})?$/.test(bid)) { err.textContent = 'Maximum bid: enter an amount such as 25 or 25.50 (at most 2 decimals).'; $('ed-bid').focus(); return; }
    const params = {
      item_no: no,
      bid: bid === '' ? '0' : bid,
      delay: $('ed-delay').value.trim() || DEFAULT_DELAY,
      groupName: $('ed-group').value.trim(),
      enabled: $('ed-enabled').checked ? 1 : 0,
    };
    params.force = $('ed-force').checked ? 1 : 0;
    $('ed-save').disabled = true;
    err.textContent = '';
    try {
      const body = await call('addBid', params);
      $('editor').close();
      state.entries.set(no, Object.assign({}, state.entries.get(no), {
        item_no: no, bid: body.bid, delay: body.delay, groupName: body.groupName, group_id: body.group_id, enabled: params.enabled, force: params.force, fireTime: '',
      }));
      if (body.groupName) state.groups.add(body.groupName);
      notify(body.message || 'Snipe saved.', body.message_color === 'orange' ? 'orange' : 'green');
      const watched = parseFloat(body.bid) === 0;
      if (state.view !== 'snipes') show('snipes');
      if ((watched ? 'watched' : 'current') !== state.tab && !state.editing) selectTab(watched ? 'watched' : 'current');
      else loadList();
      openItem(no);
    } catch (e2) {
      if (e2.status === 401) { $('editor').close(); return; }
      err.textContent = describe(e2);
      const field = { item_no: 'ed-item', bid: 'ed-bid', delay: 'ed-delay', groupName: 'ed-group' }[e2.param];
      if (field) $(field).focus();
    } finally {
      $('ed-save').disabled = false;
    }
  }

  // ---- watch list import --------------------------------------------------

  async function importWatchList() {
    const btn = $('import-btn'), status = $('import-status');
    btn.disabled = true;
    btn.setAttribute('aria-busy', 'true');
    const started = Date.now();
    const say = () => { status.replaceChildren(h('span', { class: 'spinner', 'aria-hidden': 'true' }), `Importing your marketplace watch list… ${Math.round((Date.now() - started) / 1000)} s (this can take a minute or more)`); };
    say();
    status.hidden = false;
    const timer = setInterval(say, 1000);
    try {
      const body = await call('importWatchList');
      const n = body.items_imported ?? 0, s = body.items_skipped ?? 0;
      notify(`Watch list imported: ${n} new item${n === 1 ? '' : 's'}, ${s} skipped (already sniped).`);
      selectTab('watched');
    } catch (err) {
      if (err.status !== 401) showError(err);
    } finally {
      clearInterval(timer);
      status.hidden = true;
      btn.disabled = false;
      btn.removeAttribute('aria-busy');
    }
  }

  // ---- search -------------------------------------------------------------

  async function loadSearches() {
    try {
      const body = await call('getUserSearches');
      const list = arrayIn(body, ['searches', 'items']);
      $('saved-list').replaceChildren(...list.map(s => h('li', { class: 'chip' },
        h('button', { type: 'button', class: 'link', title: `Run “${s.query}”`, onclick: () => { $('search-query').value = s.query; runSearch(); } }, s.query),
        h('button', { type: 'button', class: 'chip-x', 'aria-label': `Delete saved search “${s.query}”`, onclick: () => deleteSearch(s.id, s.query) }, '×'))));
      $('saved-empty').hidden = list.length > 0;
    } catch (err) {
      if (err.status !== 401) showError(err);
    }
  }

  async function saveSearch() {
    const query = $('search-query').value.trim();
    if (!query) { showError('Type a search text first, then save it.'); $('search-query').focus(); return; }
    try {
      const body = await call('addSearch', { query });
      notify(body.message || `Saved “${query}”.`);
      loadSearches();
    } catch (err) {
      if (err.status !== 401) showError(err);
    }
  }

  async function deleteSearch(id, query) {
    try {
      await call('deleteSearch', { id });
      notify(`Deleted saved search “${query}”.`);
      loadSearches();
    } catch (err) {
      if (err.status !== 401) showError(err);
    }
  }

  async function runSearch(e) {
    if (e) e.preventDefault();
    const query = $('search-query').value.trim();
    const country = $('search-country').value.trim().toUpperCase() || 'US';
    if (!query) { $('search-query').focus(); return; }
    show('search');
    $('search-btn').disabled = true;
    $('results-title').textContent = `Searching “${query}”…`;
    try {
      const body = await call('getSearchResults', { query, country_code: country });
      const list = arrayIn(body, ['items', 'results']);
      $('results-title').textContent = `${list.length} result${list.length === 1 ? '' : 's'} for “${query}” in ${country}`;
      $('results').replaceChildren(...list.map(it => {
        const end = parseUTC(it.endTime);
        const price = parseFloat(it.currentPrice);
        return h('tr', { dataset: { item: it.item_no } },
          h('td', { class: 'item-cell' },
            it.galleryUrl ? h('img', { src: it.galleryUrl, alt: '', width: 40, height: 40, loading: 'lazy' }) : h('span', { class: 'thumb' }),
            h('span', { class: 'item-text' }, h('span', {}, it.title), h('span', { class: 'muted small' }, `#${it.item_no}`))),
          h('td', { class: 'num', 'data-label': 'Price' }, money(price, it.currency)),
          h('td', { class: 'num', 'data-label': 'Bids' }, it.bids ?? '–'),
          h('td', { 'data-label': 'Ends' }, Number.isFinite(end) ? h('span', { class: 'countdown', dataset: { end }, title: dateTime.format(end) }) : (it.timeLeft || '–')),
          h('td', { 'data-label': 'Country' }, it.country || ''),
          h('td', { class: 'status-cell' }, h('button', { type: 'button', class: 'btn small snipe-this', onclick: () => openEditor(it.item_no, it) }, 'Snipe this')));
      }));
      $('results-empty').hidden = list.length > 0;
      $('results-empty').textContent = 'No live listings match. Try fewer words.';
      tick();
    } catch (err) {
      $('results-title').textContent = 'Results';
      if (err.status !== 401) showError(err);
    } finally {
      $('search-btn').disabled = false;
    }
  }

  // ---- wiring -------------------------------------------------------------

  function init() {
    $('connect-form').addEventListener('submit', async e => {
      e.preventDefault();
      const key = $('key-input').value.trim();
      if (!key) return;
      $('connect-btn').disabled = true;
      $('connect-error').textContent = '';
      try {
        await connect(key);
        $('key-input').value = '';
      } catch (err) {
        state.key = '';
        sessionStorage.removeItem(KEY_STORAGE);
        show('connect');
        $('connect-error').textContent = describe(err);
        $('key-input').select();
      } finally {
        $('connect-btn').disabled = false;
      }
    });
    $('forget-btn').addEventListener('click', () => signOut('Key forgotten. Paste a key to connect again.'));
    $('alert-close').addEventListener('click', clearError);

    for (const b of document.querySelectorAll('.view-btn')) {
      b.addEventListener('click', () => { show(b.dataset.view); if (b.dataset.view === 'snipes') loadList(); });
    }
    const tabs = [...document.querySelectorAll('.tab')];
    tabs.forEach((t, i) => {
      t.addEventListener('click', () => selectTab(t.dataset.tab));
      t.addEventListener('keydown', e => { // arrow keys move between tabs (ARIA tabs pattern)
        const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
        if (e.key === 'Home' || e.key === 'End' || step) {
          e.preventDefault();
          const j = e.key === 'Home' ? 0 : e.key === 'End' ? tabs.length - 1 : (i + step + tabs.length) % tabs.length;
          selectTab(tabs[j].dataset.tab, true);
        }
      });
    });
    $('orderby').addEventListener('change', e => { state.orderby = e.target.value; state.offset = 0; loadList(); });
    $('dir').addEventListener('change', e => { state.dir = e.target.value; state.offset = 0; loadList(); });
    $('limit').addEventListener('change', e => { state.limit = +e.target.value; state.offset = 0; loadList(); });
    $('show-won').addEventListener('change', e => { state.showWon = e.target.checked; state.offset = 0; loadList(); });
    $('refresh-btn').addEventListener('click', loadList);
    $('prev-btn').addEventListener('click', () => { state.offset = Math.max(0, state.offset - state.limit); loadList(); });
    $('next-btn').addEventListener('click', () => { state.offset += state.limit; loadList(); });

    $('add-btn').addEventListener('click', () => openEditor(null));
    $('edit-btn').addEventListener('click', () => openEditor(state.selected));
    $('delete-btn').addEventListener('click', e => deleteSnipe(e.currentTarget));
    $('detail-refresh').addEventListener('click', refreshDetail);
    $('detail-close').addEventListener('click', closeDetail);
    $('editor-form').addEventListener('submit', saveSnipe);
    $('ed-cancel').addEventListener('click', () => $('editor').close());
    $('ed-item').addEventListener('input', () => {
      clearTimeout(lookupTimer);
      lookupTimer = setTimeout(() => lookupPreview($('ed-item').value.trim()), 350);
    });
    $('import-btn').addEventListener('click', importWatchList);

    $('search-form').addEventListener('submit', runSearch);
    $('save-search-btn').addEventListener('click', saveSearch);

    document.addEventListener('keydown', e => {
      if (e.key === 'Escape' && !$('editor').open && state.selected) closeDetail();
    });
    if (window.ResizeObserver) {
      let w = 0;
      new ResizeObserver(entries => {
        const nw = Math.round(entries[0].contentRect.width);
        if (nw !== w) { w = nw; drawChart(); }
      }).observe($('chart'));
    }
    setInterval(tick, 1000);

    if (state.key) {
      connect(state.key).catch(err => { if (err.status !== 401) { show('connect'); $('connect-error').textContent = describe(err); } });
    } else {
      show('connect');
      $('key-input').focus();
    }
  }

  // The Notifications page (notify.js) uses these.
  window.SnipedApp = { call, h, money, parseUTC, dateTime, countdown, describe, showError, notify, openEditor, show, tick };

  init();
})();
