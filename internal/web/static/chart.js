// chart.js draws getBidHistoryDataset's answer as inline SVG: the bid
// history as a stepped price line with a point per bid, and the dashed
// horizontal snipe line. Times are shown in the viewer's local time and
// amounts in the item's currency.
'use strict';

window.BidChart = (() => {
  const NS = 'http://www.w3.org/2000/svg';
  const SEC = 1e3, MIN = 60 * SEC, HOUR = 60 * MIN, DAY = 24 * HOUR;
  // Candidate tick spacings for the time axis, smallest first.
  const TIME_STEPS = [SEC, 5 * SEC, 15 * SEC, 30 * SEC, MIN, 5 * MIN, 15 * MIN, 30 * MIN,
    HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 30 * DAY];
  const PAD = { top: 16, right: 16, bottom: 28, left: 58 };
  const HEIGHT = 240;

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // timeTicks returns round local times between min and max, about target of them.
  function timeTicks(min, max, target) {
    const tz = new Date(min).getTimezoneOffset() * MIN; // local = utc - tz
    const at = step => {
      const ticks = [];
      for (let t = Math.ceil((min - tz) / step) * step + tz; t <= max; t += step) ticks.push(t);
      return ticks;
    };
    let i = TIME_STEPS.findIndex(s => (max - min) / s <= target);
    if (i < 0) i = TIME_STEPS.length - 1;
    let ticks = at(TIME_STEPS[i]);
    // A coarse step can leave a single tick; one step finer reads better.
    if (ticks.length < 2 && i > 0) ticks = at(TIME_STEPS[--i]);
    return { ticks, step: TIME_STEPS[i] };
  }

  function timeFormat(step, span) {
    if (step >= DAY) return new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
    const opts = { hour: '2-digit', minute: '2-digit' };
    if (step < MIN) opts.second = '2-digit';
    if (span >= DAY) { opts.month = 'short'; opts.day = 'numeric'; }
    return new Intl.DateTimeFormat(undefined, opts);
  }

  // niceTicks returns round amounts covering [min, max].
  function niceTicks(min, max, target) {
    const raw = (max - min) / target;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
    const lo = Math.floor(min / step) * step, hi = Math.ceil(max / step) * step;
    const ticks = [];
    for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Math.round(v * 100) / 100);
    return { ticks, lo, hi };
  }

  function points(ds) {
    return ((ds && ds.data) || []).filter(p => p && Number.isFinite(p.x) && Number.isFinite(p.y));
  }

  function colour(v, fallback) { return typeof v === 'string' && v ? v : fallback; }

  // render replaces box's content with the chart of datasets (the array that
  // getBidHistoryDataset returns). currency is an ISO 4217 code.
  function render(box, datasets, currency, title) {
    box.replaceChildren();
    const [histDS, snipeDS] = Array.isArray(datasets) ? datasets : [];
    const hist = points(histDS).sort((a, b) => a.x - b.x);
    let snipe = points(snipeDS);
    if (!snipe.length || snipe.every(p => p.y <= 0)) snipe = []; // a watched item has no snipe line
    const money = amountFormatter(currency);

    const all = hist.concat(snipe);
    if (!all.length) {
      const p = document.createElement('p');
      p.className = 'chart-empty';
      p.textContent = 'No bids yet. The history appears here as bids come in.';
      box.appendChild(p);
      return null;
    }

    const width = Math.max(280, Math.round(box.clientWidth || 560));
    let xMin = Math.min(...all.map(p => p.x)), xMax = Math.max(...all.map(p => p.x));
    if (xMax - xMin < MIN) { // bids seconds apart (or one bid): a minute around them
      const mid = (xMin + xMax) / 2;
      xMin = mid - 30 * SEC; xMax = mid + 30 * SEC;
    }
    let yMin = Math.min(...all.map(p => p.y)), yMax = Math.max(...all.map(p => p.y));
    const ypad = Math.max((yMax - yMin) * 0.1, yMax * 0.05, 1);
    const y = niceTicks(Math.max(0, yMin - ypad), yMax + ypad, 4);
    const x = timeTicks(xMin, xMax, Math.max(2, Math.floor((width - PAD.left - PAD.right) / 80)));

    const iw = width - PAD.left - PAD.right, ih = HEIGHT - PAD.top - PAD.bottom;
    const sx = t => PAD.left + (t - xMin) / (xMax - xMin) * iw;
    const sy = v => PAD.top + ih - (v - y.lo) / (y.hi - y.lo) * ih;

    const svg = el('svg', {
      class: 'chart', width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`,
      role: 'img', 'aria-label': summary(hist, snipe, money, title),
    });

    const grid = el('g', { class: 'grid' }, svg);
    // Whole-number ticks read better without ".00".
    const tickMoney = y.ticks.every(Number.isInteger) ? amountFormatter(currency, 0) : money;
    for (const v of y.ticks) {
      el('line', { x1: PAD.left, x2: width - PAD.right, y1: sy(v), y2: sy(v) }, grid);
      el('text', { x: PAD.left - 8, y: sy(v) + 4, 'text-anchor': 'end', class: 'tick' }, grid).textContent = tickMoney(v);
    }
    const fmt = timeFormat(x.step, xMax - xMin);
    for (const t of x.ticks) {
      el('line', { x1: sx(t), x2: sx(t), y1: HEIGHT - PAD.bottom, y2: HEIGHT - PAD.bottom + 4 }, grid);
      el('text', { x: sx(t), y: HEIGHT - 8, 'text-anchor': 'middle', class: 'tick' }, grid).textContent = fmt.format(t);
    }
    el('line', { x1: PAD.left, x2: width - PAD.right, y1: HEIGHT - PAD.bottom, y2: HEIGHT - PAD.bottom, class: 'axis' }, grid);

    if (snipe.length) {
      const sv = snipe[0].y;
      const dash = Array.isArray(snipeDS.borderDash) ? snipeDS.borderDash.join(' ') : '6 4';
      el('line', {
        class: 'snipe-line', x1: PAD.left, x2: width - PAD.right, y1: sy(sv), y2: sy(sv),
        stroke: colour(snipeDS.borderColor, '#d92d20'), 'stroke-width': snipeDS.borderWidth || 2, 'stroke-dasharray': dash,
      }, svg);
      // The label keeps a dark, readable red whatever the line's colour.
      const label = el('text', { class: 'snipe-label', x: width - PAD.right - 4, y: sy(sv) - 6, 'text-anchor': 'end' }, svg);
      label.textContent = 'Snipe ' + money(sv);
    }

    if (hist.length) {
      const stroke = colour(histDS.borderColor, '#1d4ed8');
      // Price holds between bids, so draw steps rather than slopes.
      let d = `M${sx(hist[0].x)},${sy(hist[0].y)}`;
      for (let i = 1; i < hist.length; i++) d += `H${sx(hist[i].x)}V${sy(hist[i].y)}`;
      el('path', { class: 'hist-line', d, fill: 'none', stroke, 'stroke-width': histDS.borderWidth || 2 }, svg);
      const r = Number.isFinite(histDS.pointRadius) && histDS.pointRadius > 0 ? histDS.pointRadius : 3;
      const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
      for (const p of hist) {
        const c = el('circle', { class: 'hist-point', cx: sx(p.x), cy: sy(p.y), r, fill: colour(histDS.backgroundColor, stroke), stroke }, svg);
        el('title', {}, c).textContent = `${when.format(p.x)}: ${money(p.y)}`;
      }
    }
    if (!hist.length) {
      el('text', { class: 'chart-note', x: PAD.left + iw / 2, y: PAD.top + ih / 2, 'text-anchor': 'middle' }, svg).textContent = 'No bids yet';
    }
    box.appendChild(svg);
    return svg;
  }

  function summary(hist, snipe, money, title) {
    let s = `Bid history${title ? ' of ' + title : ''}: `;
    s += hist.length ? `${hist.length} bid${hist.length === 1 ? '' : 's'}, from ${money(hist[0].y)} to ${money(hist[hist.length - 1].y)}` : 'no bids yet';
    if (snipe.length) s += `; your snipe at ${money(snipe[0].y)}`;
    return s + '.';
  }

  // amountFormatter formats amounts in currency; digits, when given, fixes
  // the number of decimals.
  function amountFormatter(currency, digits) {
    try {
      const opts = { style: 'currency', currency: currency || 'USD' };
      if (digits !== undefined) opts.minimumFractionDigits = opts.maximumFractionDigits = digits;
      const f = new Intl.NumberFormat(undefined, opts);
      return v => f.format(v);
    } catch (e) { // an unknown currency code: plain number and code
      return v => `${Number(v).toFixed(2)} ${currency || ''}`.trim();
    }
  }

  return { render, amountFormatter };
})();
