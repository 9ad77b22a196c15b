// market.js is the dashboard's marketplace link: which marketplace user
// snipes bid as, "Connect eBay" (through the marketplace's consent page)
// and Unlink. It uses the public operations getMarketAccount,
// connectMarketAccount and unlinkMarketAccount with the key app.js keeps
// in sessionStorage, and follows app.js's session through the events
// sniped:connected and sniped:signedout.
'use strict';

(() => {
  const BASE = location.pathname.replace(/\/ui(\/[^/]*)?$/, '');
  const KEY_STORAGE = 'sniped.key';
  // What /market/callback reports in ?market=, and what to tell the user.
  const OUTCOMES = {
    linked: ['green', 'eBay account linked: snipes now bid as that eBay user.'],
    declined: ['orange', 'Linking was cancelled on the eBay page; nothing changed.'],
    expired: ['orange', 'The link request took too long (more than 15 minutes). Choose Connect eBay to try again.'],
    other_browser: ['orange', 'The link request was started in another browser (or this one blocks its cookie), so nothing changed. Choose Connect eBay in this browser to link this account.'],
    invalid: ['orange', 'The link request was not valid, so nothing changed. Choose Connect eBay to start again from this page.'],
    failed: ['orange', 'eBay did not confirm the link. Try Connect eBay again in a moment; if it keeps failing, tell the operator.'],
    not_needed: ['green', 'This server uses the built-in simulator: there is no eBay account to link.'],
    not_configured: ['orange', 'This server is not set up for eBay\'s consent page; ask the operator to link your account.'],
  };

  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    e.append(...children.filter(c => c !== null && c !== undefined && c !== false));
    return e;
  };

  // The header control and the banner shown while snipes cannot bid.
  const box = el('div', { class: 'market', id: 'market', hidden: true });
  const banner = el('div', { class: 'market-banner', id: 'market-banner', role: 'status', hidden: true });

  function notice(tone, text) {
    const n = el('div', { class: `notice ${tone}` }, text);
    const list = document.getElementById('notices');
    if (!list) return;
    list.append(n);
    setTimeout(() => n.remove(), 8000);
  }

  function alertText(text) {
    const a = document.getElementById('alert');
    const t = document.getElementById('alert-text');
    if (a && t) { t.textContent = text; a.hidden = false; } else notice('orange', text);
  }

  // call runs an operation with the session's key. Only
  // connectMarketAccount takes cookies: it sets the consent flow's, which
  // the callback needs on the way back.
  async function call(op) {
    const key = sessionStorage.getItem(KEY_STORAGE) || '';
    const credentials = op === 'connectMarketAccount' ? 'same-origin' : 'omit';
    let res, body = null;
    try {
      res = await fetch(`${BASE}/${op}`, { cache: 'no-store', credentials, headers: { Accept: 'application/json', Authorization: `Bearer ${key}` } });
      body = await res.json();
    } catch (e) {
      throw new Error('Cannot reach sniped. Check that the service is running, then try again.');
    }
    if (!res.ok || !body || body.status !== 'OK') throw new Error((body && body.message) || `sniped answered HTTP ${res.status}.`);
    return body;
  }

  const on = v => v === 1 || v === true || v === '1';

  function render(acct) {
    box.replaceChildren();
    banner.replaceChildren();
    banner.hidden = true;
    if (!acct) { box.hidden = true; return; }
    box.hidden = false;
    if (!on(acct.link_needed)) {
      box.append(el('span', { class: 'market-chip', id: 'market-user', title: acct.message }, 'Simulator'));
      return;
    }
    const name = acct.marketplace || 'eBay';
    if (on(acct.linked) && on(acct.usable)) {
      const who = acct.market_user || 'linked';
      const until = acct.token_expires ? ` until ${acct.token_expires} UTC` : '';
      box.append(
        el('span', { class: 'market-chip ok', id: 'market-user', title: acct.message }, `${name}: `, el('strong', {}, who)),
        el('button', { type: 'button', class: 'btn ghost small', id: 'market-unlink', title: `Stop bidding as ${who}${until}`, onclick: unlink }, 'Unlink'));
      return;
    }
    const state = on(acct.linked) ? 'link unusable' : 'not linked';
    box.append(
      el('span', { class: 'market-chip warn', id: 'market-user', title: acct.message }, `${name}: ${state}`),
      el('button', { type: 'button', class: 'btn primary small', id: 'market-connect', onclick: connect }, `Connect ${name}`));
    banner.append(el('span', {}, acct.message));
    banner.hidden = false;
  }

  async function refresh() {
    try {
      render(await call('getMarketAccount'));
    } catch (err) {
      render(null);
      alertText(err.message);
    }
  }

  async function connect(e) {
    const btn = e.currentTarget;
    btn.disabled = true;
    try {
      const body = await call('connectMarketAccount');
      // The consent page returns to /market/callback, then to this page;
      // the key stays in this tab's sessionStorage meanwhile.
      location.assign(body.authorize_url);
    } catch (err) {
      btn.disabled = false;
      alertText(err.message);
    }
  }

  async function unlink(e) {
    const btn = e.currentTarget;
    if (btn.dataset.confirm !== '1') { // two steps instead of a modal confirm, as Delete does
      btn.dataset.confirm = '1';
      btn.textContent = 'Confirm unlink';
      btn.classList.replace('ghost', 'danger');
      setTimeout(() => { if (btn.isConnected) { btn.dataset.confirm = ''; btn.textContent = 'Unlink'; btn.classList.replace('danger', 'ghost'); } }, 4000);
      return;
    }
    btn.disabled = true;
    try {
      const body = await call('unlinkMarketAccount');
      notice('green', body.message);
    } catch (err) {
      alertText(err.message);
    }
    refresh();
  }

  // The callback's outcome, once, then out of the address bar so that a
  // reload does not repeat it.
  function reportOutcome() {
    const params = new URLSearchParams(location.search);
    const outcome = params.get('market');
    if (!outcome) return;
    const [tone, text] = OUTCOMES[outcome] || ['orange', 'Linking did not complete.'];
    notice(tone, text);
    params.delete('market');
    const q = params.toString();
    history.replaceState(null, '', location.pathname + (q ? `?${q}` : '') + location.hash);
  }

  function init() {
    const session = document.getElementById('session');
    if (session) session.prepend(box);
    const main = document.getElementById('main');
    if (main) main.prepend(banner);
    document.addEventListener('sniped:connected', refresh);
    document.addEventListener('sniped:signedout', () => render(null));
    reportOutcome();
  }

  init();
})();
