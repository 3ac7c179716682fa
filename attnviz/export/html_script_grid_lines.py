"""The interactive page's all-heads grid and token lines (JavaScript), joined into :data:`html_script.SCRIPT` by
:mod:`attnviz.export.html_script_views` between the head map and the controls.

All heads: tiles at a legible size, paged when a model has more heads than fit (as html_layout.grid_page),
the selection moving with a page turn; token lines: every weight of the shown heads (a pooled page leaves them out),
hover reading out each token's strongest link.
"""

GRID_LINES_SCRIPT = r"""
// -- all heads --------------------------------------------------------------------------------
function gridRoom() {  // [width, height] for the tiles: the browser window's room beside and under the grid's labels
  // (a 32 × 32-head page used ~45 % of a 1,920-wide window, and its last rows fell under a 720-line one), at least
  // grid_width wide and a row high; a notebook's iframe is sized for grid_width × grid_height
  // (html_layout.page_height), so there it stays that
  if (window.self !== window.top) return [LAY.grid_width, LAY.grid_height];
  const r = $("grid").getBoundingClientRect(), top = r.top + window.scrollY, left = r.left + window.scrollX;
  return [Math.max(LAY.grid_width, Math.floor(window.innerWidth - left - LAY.grid_left - 24)),
          Math.max(LAY.grid_min_notes + 20, Math.floor(window.innerHeight - top - LAY.grid_top - 24))];
}
function gridPage(P) {  // as html_layout.grid_page: tiles never shrink below a legible size; a larger model pages
  const L = P.layers.length, H = P.heads, notes = P.layers[0].entropy !== undefined, gap = notes ? 20 : 6;
  const [rw, rh] = gridRoom();
  // in a window of its own the tiles take its room (a 2 × 4-head model drew 96-px tiles in a quarter of a 1,920 × 1,080
  // window); in a notebook's iframe, sized for them, grid_max as html_layout.grid_page
  // A model too deep for the window pages over its layers at a size that shows at least PAGE_ROWS of them (a 30 × 9
  // model in a 1,920 × 1,080 window drew 64-px tiles in its top-left 42 %, sized for all 30 layers at once)
  const own = window.self === window.top, cap = own ? LAY.grid_max_window : LAY.grid_max, PAGE_ROWS = 6;
  const room = own ? Math.min(Math.floor(rw / H), Math.floor(rh / Math.min(L, PAGE_ROWS))) : Math.floor(rw / H);
  const size = Math.max(notes ? LAY.grid_min_notes : LAY.grid_min, Math.min(cap, room - gap));
  // as many a page as the window holds (a page's grid uses the window's width: test_html_grid_width); layers
  // balanced over the pages that takes: a 30-layer model nine a page ended on a page of three (L27–L29)
  const even = (n, most) => Math.ceil(n / Math.ceil(n / Math.max(1, Math.min(n, most))));
  const hp = Math.max(1, Math.min(H, Math.floor(rw / (size + gap)))), lp = even(L, Math.floor(rh / (size + gap)));
  // fixed pages, as the app's (all_heads_pages.page_ranges): head k on page k // hp, the last holding what is left,
  // the selected head's page shown; paging moves the selection a page, so the keyboard and the buttons agree
  return {size, gap, notes, hp, lp, l0: Math.floor(st.layer / lp) * lp, h0: Math.floor(st.head / hp) * hp,
    paged: lp < L || hp < H};
}
function drawModel() {
  const P = part(), nq = P.rows, nk = P.cols, L = P.layers.length, H = P.heads, dpr = window.devicePixelRatio || 1;
  const g = gridPage(P), {size, gap, notes, l0, h0} = g, hn = Math.min(g.hp, H - h0), ln = Math.min(g.lp, L - l0);
  const left = LAY.grid_left, top = LAY.grid_top, pool = Math.max(1, Math.ceil(Math.max(nq, nk) / Math.floor(size * dpr)));
  const tq = Math.ceil(nq / pool), tk = Math.ceil(nk / pool), W = left + g.hp * (size + gap), Ht = top + g.lp * (size + gap);
  const cv = $("grid"), ctx = sized(cv, W, Ht);
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, W, Ht);
  ctx.imageSmoothingEnabled = false;
  const off = document.createElement("canvas"); off.width = tk; off.height = tq;
  const octx = off.getContext("2d");
  const x = (h) => left + (h - h0) * (size + gap), y = (l) => top + (l - l0) * (size + gap);
  for (let l = l0; l < l0 + ln; l++) {
    const E = P.layers[l];
    for (let h = h0; h < h0 + hn; h++) {
      const img = new ImageData(tk, tq);
      paintMap(E, h, nq, nk, vmaxOf(E, h), img, pool);
      octx.putImageData(img, 0, 0);
      ctx.drawImage(off, x(h), y(l), size, size);
    }
  }
  if (notes) {
    ctx.fillStyle = M.fg; ctx.font = `${LAY.grid_note_px}px sans-serif`; ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let l = l0; l < l0 + ln; l++) for (let h = h0; h < h0 + hn; h++)
      ctx.fillText(noteText(P.layers[l], h), x(h) + size / 2, y(l) + size + 2);
  }
  ctx.strokeStyle = M.fg; ctx.lineWidth = 2;
  ctx.strokeRect(x(st.head) - 1, y(st.layer) - 1, size + 2, size + 2);
  ctx.fillStyle = M.fg; ctx.font = "12px sans-serif"; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  for (let h = h0; h < h0 + hn; h++) ctx.fillText(`H${h}`, x(h) + size / 2, top - 4);
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (let l = l0; l < l0 + ln; l++) ctx.fillText(`L${P.layers[l].layer}`, left - 6, y(l) + size / 2);
  Object.assign(G, {gLeft: left, gTop: top, gPitch: size + gap, gSize: size, gL0: l0, gH0: h0, gLn: ln, gHn: hn});
  const pager = $("grid-pages");
  pager.hidden = !g.paged;
  $("grid-page").textContent = g.paged ? `layers ${P.layers[l0].layer}–${P.layers[l0 + ln - 1].layer} of ${L} · ` +
    `heads ${h0}–${h0 + hn - 1} of ${H}` : "";
  $("grid-up").disabled = l0 === 0; $("grid-down").disabled = l0 + ln >= L;
  $("grid-left").disabled = h0 === 0; $("grid-right").disabled = h0 + hn >= H;
  const cells = pool * Math.max(P.row_step, P.col_step);
  const pooled = cells > 1 ? ` · each drawn cell = largest of up to ${cells}×${cells} weights` : "";
  const legend = notes ? " — under each: entropy (nats)" + (P.distance_unit ? ` · mean attention distance (${P.distance_unit})` : "") : "";
  const page = g.paged ? ` · page: layers ${P.layers[l0].layer}–${P.layers[l0 + ln - 1].layer}, heads ${h0}–${h0 + hn - 1} (▲▼◀▶ for the rest)` : "";
  $("title").textContent = `All heads · ${P.name}${legend}${page} · ${scaleNote()}${pooled}`;
  cv.setAttribute("aria-label", `All heads of ${P.name}: ${L} layers by ${H} heads` +
    (g.paged ? `, this page layers ${P.layers[l0].layer} to ${P.layers[l0 + ln - 1].layer}, heads ${h0} to ${h0 + hn - 1}` : "") +
    `, layer ${entry().layer} head ${st.head} selected. Arrow keys move the selection, Enter opens its head map.`);
}
function turnGridPage(dl, dh) {  // a page of layers or heads on: the selection moves with it (clamped)
  const P = part(), g = gridPage(P);
  st.layer = Math.min(P.layers.length - 1, Math.max(0, st.layer + dl * g.lp));
  st.head = Math.min(P.heads - 1, Math.max(0, st.head + dh * g.hp));
  controls(); draw();
}
function gridCell(ev) {
  const r = $("grid").getBoundingClientRect(), P = part();
  const c = Math.floor((ev.clientX - r.left - G.gLeft) / G.gPitch), w = Math.floor((ev.clientY - r.top - G.gTop) / G.gPitch);
  return c >= 0 && w >= 0 && c < G.gHn && w < G.gLn ? [G.gL0 + w, G.gH0 + c] : null;
}
api.thumbCenter = (l, h) => {  // a head on the page shown (null off it)
  const r = $("grid").getBoundingClientRect();
  if (l < G.gL0 || l >= G.gL0 + G.gLn || h < G.gH0 || h >= G.gH0 + G.gHn) return null;
  return [r.left + G.gLeft + (h - G.gH0) * G.gPitch + G.gSize / 2, r.top + G.gTop + (l - G.gL0) * G.gPitch + G.gSize / 2];
};
function headInfo(l, h) {  // as ModelView.head_info
  const P = part(), E = P.layers[l];
  let text = `Layer ${E.layer} · head ${h}: largest weight ${E.max[h].toFixed(4)}`;
  if (E.entropy) text += `, entropy ${E.entropy[h].toFixed(4)} nats`;
  if (E.distance) text += `, mean distance ${E.distance[h].toFixed(3)} ${P.distance_unit}`;
  return [text, E.max[h]];
}
function hoverModel(ev) {
  const c = gridCell(ev);
  if (!c) { status("", null); return; }
  status(...headInfo(...c));
}
function noteText(E, h) {  // as ModelView._note
  return E.entropy[h].toFixed(2) + (E.distance ? ` · ${E.distance[h].toFixed(1)}` : "");
}
// -- token lines (every weight: a pooled page leaves them out) --------------------------------
function linesOf(E, heads, nq, nk, focus) {
  const K = part().cols, n = part().rows * K, out = [];
  for (const h of heads) for (let i = 0; i < nq; i++) for (let j = 0; j < nk; j++) {
    const w = E.vals[h * n + i * K + j];
    if (w < 1 / 255) continue;
    const touches = !focus || (focus[0] === "left" ? focus[1] === i : focus[1] === j);
    if (focus && !touches) continue;  // hovering a token filters its lines
    out.push([w, h, i, j]);
  }
  out.sort((a, b) => a[0] - b[0]);  // the strongest drawn last
  const cut = out.length > 3000 ? out[out.length - 3000][0] : 0;
  return [out.length > 3000 ? out.slice(out.length - 3000) : out, cut];
}
let linesRoomAt = null;  // [window width, height, room]: measured once a window size (a hover's status line moves the
// canvas, and a room measured again then drew the same lines at another size)
function linesRoom() {  // [width, height] of the browser window's room for the lines: [0, 0] in a notebook's iframe
  if (window.self !== window.top) return [0, 0];
  if (linesRoomAt && linesRoomAt[0] === window.innerWidth && linesRoomAt[1] === window.innerHeight) return linesRoomAt[2];
  const r = $("lines").getBoundingClientRect(), top = r.top + window.scrollY, left = r.left + window.scrollX;
  const room = [Math.floor(window.innerWidth - left - 24),
                Math.max(0, Math.floor(window.innerHeight - top - 2 * LAY.lines_top - 24))];
  if ($("lines").offsetParent !== null) linesRoomAt = [window.innerWidth, window.innerHeight, room];  // (shown)
  return room;
}
function drawLines() {
  const P = part(), E = entry(), nq = Math.min(P.rows, M.line_tokens), nk = Math.min(P.cols, M.line_tokens);
  const heads = st.heads ?? [...Array(P.heads).keys()];
  const n = Math.max(nq, nk), top = LAY.lines_top, [rw, rh] = linesRoom();
  // in a window of its own the rows take its height (up to lines_max_window apart; never closer than in a notebook)
  // and the figure more of its width (twelve tokens drew 250 px tall and 600 wide in a 1,920 × 1,080 window); in a
  // notebook's iframe the layout's sizes
  const laid = Math.max(LAY.lines_min, Math.min(LAY.lines_max, LAY.lines_span / n));
  const pitch = rw ? Math.max(laid, Math.min(LAY.lines_max_window, rh / n)) : laid;
  const font = Math.max(LAY.min_text_px, Math.min(rw ? 24 : 13, pitch - 2));  // 12 px, every k-th token when closer
  const label = Math.round(150 * Math.max(1, font / 13));
  const W = Math.max(LAY.lines_width, Math.min(rw, 2 * label + 1.6 * pitch * n));  // lines about as wide as tall
  const lx = label, rx = W - label, Ht = top * 2 + pitch * n;
  const cv = $("lines"), ctx = sized(cv, W, Ht);
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, W, Ht);
  const [lines, cut] = linesOf(E, heads, nq, nk, st.focus);
  const off = (h) => (heads.indexOf(h) - (heads.length - 1) / 2) * Math.min(2, pitch / (2 * heads.length));
  ctx.lineWidth = 1.2;
  for (const [w, h, i, j] of lines) {
    ctx.strokeStyle = M.head_colours[h % M.head_colours.length]; ctx.globalAlpha = Math.min(1, w);
    ctx.beginPath(); ctx.moveTo(lx + 6, top + (i + 0.5) * pitch + off(h)); ctx.lineTo(rx - 6, top + (j + 0.5) * pitch + off(h)); ctx.stroke();
  }
  ctx.globalAlpha = 1;
  labels(ctx, P.queries.slice(0, nq), (i) => top + (i + 0.5) * pitch, pitch, font, false, lx);
  ctx.textAlign = "left";
  for (let j = 0; j < nk; j += Math.max(1, Math.ceil((font + 1) / pitch))) ctx.fillText(axisText(tok(P.keys[j])), rx, top + (j + 0.5) * pitch);
  Object.assign(G, {lTop: top, lPitch: pitch, lx, rx, lnq: nq, lnk: nk});
  const which = heads.length === P.heads && P.heads > 1 ? "all heads" : `heads ${heads.join(", ") || "none"}`;
  const shown = P.queries.length > nq || P.keys.length > nk ? ` · first ${M.line_tokens} tokens` : "";
  const omitted = cut > 0 ? ` · lines fainter than ${cut.toFixed(3)} left out` : "";
  $("title").textContent = `Layer ${E.layer} · ${which} · ${P.name} · line opacity = attention weight${shown}${omitted}`;
  document.querySelectorAll("#heads button").forEach((b, h) => { b.classList.toggle("off", !heads.includes(h));
    b.setAttribute("aria-pressed", String(heads.includes(h))); });
  cv.setAttribute("aria-label", `Token lines of layer ${E.layer}, ${which}, ${P.name}: a line from each query on the ` +
    "left to each key on the right, as opaque as its weight. Up and down arrows change the layer.");
}
function tokenAt(ev) {
  const r = $("lines").getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
  const i = Math.floor((y - G.lTop) / G.lPitch);
  if (x < G.lx + 4 && i >= 0 && i < G.lnq) return ["left", i];
  if (x > G.rx - 4 && i >= 0 && i < G.lnk) return ["right", i];
  return null;
}
function tokenText(side, idx) {  // as TokenLinesView.token_text: the strongest link of each shown head
  const P = part(), E = entry(), K = P.cols, n = P.rows * K;
  const heads = st.heads ?? [...Array(P.heads).keys()], parts = [];
  for (const h of heads) {
    let best = -1, bj = 0;
    const count = side === "left" ? Math.min(K, M.line_tokens) : Math.min(P.rows, M.line_tokens);
    for (let j = 0; j < count; j++) {
      const v = side === "left" ? E.vals[h * n + idx * K + j] : E.vals[h * n + j * K + idx];
      if (v > best) { best = v; bj = j; }
    }
    parts.push(`H${h}: ${tok((side === "left" ? P.keys : P.queries)[bj])} [${bj}] ${fmt(best)}`);
  }
  const names = side === "left" ? P.queries : P.keys;
  return `${tokHover(names[idx])} [${idx}] ${side === "left" ? "→ strongest key" : "← strongest query"}: ${parts.join("; ")}`;
}
function hoverLines(ev) {
  const t = tokenAt(ev);
  st.focus = t;
  status(t ? tokenText(...t) : "", null);
  drawLines();
}
api.tokenCenter = (side, i) => {
  const r = $("lines").getBoundingClientRect();
  return [r.left + (side === "left" ? G.lx - 20 : G.rx + 20), r.top + G.lTop + (i + 0.5) * G.lPitch];
};
"""
