/* certbank index: live filtering of the certification list by name, provider
   and status, with the number of results announced politely. Without this
   script the filter form is hidden (nojs.css) and the page offers the
   server-built pages per provider and status plus the full list. */
(() => {
  'use strict';
  const form = document.querySelector('[data-filter-form]');
  if (!form) return;
  const items = [...document.querySelectorAll('.cert-list .cert')];
  const count = document.getElementById('result-count');
  const none = document.getElementById('no-results');
  const { q, provider, status } = form.elements;
  const fold = (s) => s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  let names = null; // searchable text of each card, folded on first use
  let timer = 0;

  // The URL carries the filters (?q=&provider=&status=), so a filtered view
  // can be bookmarked or shared, and the form's own GET submission works.
  const params = new URLSearchParams(location.search);
  if (params.has('q')) q.value = params.get('q');
  for (const sel of [provider, status]) {
    const v = params.get(sel.name);
    if (v !== null && [...sel.options].some((o) => o.value === v)) sel.value = v;
  }

  function apply(announceNow) {
    names = names || items.map((li) => fold(li.dataset.name + ' ' + li.textContent));
    const words = fold(q.value).split(/\s+/).filter(Boolean);
    let shown = 0;
    items.forEach((li, i) => {
      const ok = words.every((w) => names[i].includes(w)) &&
        (!provider.value || li.dataset.provider === provider.value) &&
        (!status.value || li.dataset.status === status.value);
      li.hidden = !ok;
      if (ok) shown++;
    });
    none.hidden = shown > 0;
    const filtered = q.value.trim() || provider.value || status.value;
    const text = filtered ? `Showing ${shown} of ${items.length} certifications.` : `${items.length} certifications.`;
    clearTimeout(timer);
    // A short pause before updating the live region, so a screen reader
    // announces the count once the user stops typing, not on every key.
    if (announceNow) count.textContent = text;
    else timer = setTimeout(() => { count.textContent = text; }, 400);
    const p = new URLSearchParams();
    if (q.value.trim()) p.set('q', q.value.trim());
    if (provider.value) p.set('provider', provider.value);
    if (status.value) p.set('status', status.value);
    const qs = p.toString();
    history.replaceState(null, '', location.pathname + (qs ? '?' + qs : '') + location.hash);
  }

  form.addEventListener('input', () => apply(false));
  form.addEventListener('change', () => apply(false));
  form.addEventListener('submit', (e) => { e.preventDefault(); apply(true); });
  form.addEventListener('reset', () => setTimeout(() => apply(true), 0));
  document.getElementById('clear-filters').addEventListener('click', () => { form.reset(); q.focus(); });
  // Nothing to do at load unless the URL (or a quick user) set a filter.
  if (q.value || provider.value || status.value) apply(true);
})();
