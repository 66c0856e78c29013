// The operators' console: a read-only view of the API, drawn with Preact and
// htm (vendor/htm-preact.js). It logs in through POST /api/v1/sessions and
// keeps only the session's token, in this tab's sessionStorage; every call
// sends it as a Bearer token (no cookies). Views are addressed by the URL's
// hash (#/clusters/1), so the page is one file whatever the view.
import { html, render, useState, useEffect, useRef } from './vendor/htm-preact.js';

// The API's root, beside the console's (a gateway's stage prefix kept).
const apiRoot = new URL('../api/v1', document.baseURI).pathname;
const sessionKey = 'tuningbox.session';
// Explanations, diffs and UUID paths are microversion 1.3's.
const v13 = { 'OpenStack-API-Version': 'config 1.3' };

function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(sessionKey));
    return s && new Date(s.expires_at) > new Date() ? s : null;
  } catch {
    return null;
  }
}

// api calls the API with the session's token; a 401 ends the session.
async function api(path, { method = 'GET', body, headers = {}, text = false } = {}) {
  const session = loadSession();
  const h = { Accept: text ? 'text/vnd.graphviz' : 'application/json', ...headers };
  if (session) h.Authorization = 'Bearer ' + session.token;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const r = await fetch(apiRoot + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 401 && session) {
    sessionStorage.removeItem(sessionKey);
    window.dispatchEvent(new Event('tuningbox-session'));
  }
  if (!r.ok) {
    let message = r.statusText;
    try { message = (await r.json()).error.message; } catch { /* not JSON */ }
    throw new Error(r.status + ' ' + message);
  }
  if (r.status === 204) return null;
  return text ? r.text() : r.json();
}

// useAPI loads what load returns, again whenever deps change.
function useAPI(load, deps) {
  const [state, setState] = useState({ loading: true });
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    load().then((data) => live && setState({ data }), (error) => live && setState({ error }));
    return () => { live = false; };
  }, deps);
  return state;
}

function Loaded({ state, children }) {
  if (state.error) return html`<p class="error">${state.error.message}</p>`;
  if (state.loading) return html`<p class="loading">Loading…</p>`;
  return children(state.data);
}

const Status = ({ s }) => html`<span class=${'badge s-' + s}>${s}</span>`;
const when = (t) => (t ? new Date(t).toLocaleString() : '');
const seconds = (a, b) => (a && b ? ((new Date(b) - new Date(a)) / 1000).toFixed(1) + ' s' : '');
const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

// allNodes reads the node registry page by page.
async function allNodes() {
  const out = [];
  let marker = '';
  for (;;) {
    const page = await api('/nodes?limit=1000' + (marker ? '&marker=' + marker : ''));
    out.push(...page.nodes);
    if (!page.nodes_links || page.nodes_links.length === 0) return out;
    marker = page.nodes[page.nodes.length - 1].uuid;
  }
}

// ---- login

function Login({ onLogin }) {
  const [mode, setMode] = useState('password');
  const [error, setError] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const authorization = mode === 'password'
      ? 'Basic ' + btoa(unescape(encodeURIComponent(f.get('user') + ':' + f.get('password'))))
      : 'Bearer ' + f.get('token');
    try {
      const r = await fetch(apiRoot + '/sessions', { method: 'POST', headers: { Authorization: authorization, Accept: 'application/json' } });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
      sessionStorage.setItem(sessionKey, JSON.stringify(body));
      onLogin(body);
    } catch (err) {
      setError(err.message);
    }
  };
  return html`<form class="login" id="login" onSubmit=${submit}>
    <h1>tuningbox</h1>
    <p class="muted">Log in with your API user and password, or an API token.
      The console keeps only a session that ends after 30 minutes.</p>
    <p><button type="button" class="link" onClick=${() => setMode(mode === 'password' ? 'token' : 'password')}>
      ${mode === 'password' ? 'Use an API token instead' : 'Use a user and password instead'}</button></p>
    ${mode === 'password'
      ? html`<label for="user">User</label><input type="text" id="user" name="user" autocomplete="username" required />
             <label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required />`
      : html`<label for="token">API token</label><input type="password" id="token" name="token" required />`}
    <p><button type="submit" id="login-submit">Log in</button></p>
    ${error && html`<p class="error" id="login-error">${error}</p>`}
  </form>`;
}

// ---- clusters

function Clusters() {
  const state = useAPI(async () => {
    const [envs, releases, nodes, runs] = await Promise.all([
      api('/config/environments'), api('/releases'), allNodes(), api('/transactions?limit=100'),
    ]);
    const clusters = await Promise.all(envs.map(async (env) => {
      const mine = runs.filter((t) => t.cluster_id === env.id);
      const [cluster, lastRun] = await Promise.all([api('/clusters/' + env.id), lastRunByNode(mine[0])]);
      return { env, cluster, lastRun, runs: mine, nodes: nodes.filter((n) => n.environment_id === env.id) };
    }));
    return { releases, clusters };
  }, []);
  return html`<h1>Clusters</h1><${Loaded} state=${state}>${(d) => d.clusters.length === 0
    ? html`<p class="muted">No environments yet.</p>`
    : d.clusters.map((c) => html`<${ClusterCard} releases=${d.releases} ...${c} />`)}<//>`;
}

// lastRunByNode maps each node of a run to its status in the run.
async function lastRunByNode(run) {
  const byNode = {};
  if (!run || !run.sub_transactions) return byNode;
  const subs = await Promise.all(run.sub_transactions.map((s) => api('/transactions/' + s.uuid)));
  for (const s of subs) for (const n of s.nodes || []) byNode[n.node] = n.status;
  return byNode;
}

// nodesPerPage bounds the node rows drawn at once: a cluster has thousands.
const nodesPerPage = 100;

function ClusterCard({ env, cluster, releases, nodes, runs, lastRun }) {
  const [filter, setFilter] = useState('');
  const [page, setPage] = useState(0);
  const release = releases.find((r) => r.id === cluster.release_id);
  const roles = {};
  for (const n of nodes) for (const r of n.roles) roles[r] = (roles[r] || 0) + 1;
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = words.length === 0 ? nodes : nodes.filter((n) => {
    const text = [n.id, n.fqdn, ...n.roles, n.status, lastRun[String(n.id)] || ''].join(' ').toLowerCase();
    return words.every((w) => text.includes(w));
  });
  const pages = Math.max(1, Math.ceil(shown.length / nodesPerPage));
  const at = Math.min(page, pages - 1);
  return html`<section class="card cluster" id=${'cluster-' + env.id}>
    <h2>Cluster ${env.id} <span class="muted mono">${env.uuid}</span></h2>
    <p>Release: <b>${release ? release.name + ' ' + release.version : 'none'}</b>${' · '}levels ${env.hierarchy_levels.join(' → ') || '(global only)'}${' · '}<span class="node-count">${nodes.length} nodes (${Object.entries(roles).map(([r, c]) => r + ' ' + c).join(', ')})</span></p>
    <p class="links"><a href=${'#/plan/' + env.id}>Plan and graph</a><a href=${'#/config/' + env.id}>Hierarchy and explain</a><a href=${'#/history/' + env.id}>History</a><a href=${'#/audit/' + env.id}>Audit</a></p>
    <h2>Recent runs</h2>
    ${runs.length === 0 ? html`<p class="muted">No runs yet.</p>` : html`<table class="runs">
      <tr><th>Run</th><th>Graph</th><th>Status</th><th>Started</th><th>Took</th></tr>
      ${runs.slice(0, 5).map((t) => html`<tr>
        <td><a href=${'#/runs/' + t.uuid} class="mono">${t.uuid}</a></td>
        <td>${(t.sub_transactions || []).map((s) => s.graph_type).join(', ')}</td>
        <td><${Status} s=${t.status} /></td><td>${when(t.time_start)}</td><td>${seconds(t.time_start, t.time_end)}</td></tr>`)}
    </table>`}
    <h2>Nodes</h2>
    <div class="row"><label>Filter (id, host name, role, status)
      <input type="text" class="node-filter" value=${filter} onInput=${(e) => { setFilter(e.target.value); setPage(0); }} /></label>
      <span class="pager">${shown.length} shown · page ${at + 1} of ${pages}
        <button class="link" disabled=${at === 0} onClick=${() => setPage(at - 1)}>previous</button>
        <button class="link next-page" disabled=${at >= pages - 1} onClick=${() => setPage(at + 1)}>next</button></span></div>
    <table class="nodes">
      <tr><th>Node</th><th>FQDN</th><th>Roles</th><th>Placement</th><th>Registry</th><th>Last run</th></tr>
      ${shown.slice(at * nodesPerPage, (at + 1) * nodesPerPage).map((n) => html`<tr>
        <td class="num"><a href=${'#/config/' + env.id + '/' + n.id}>${n.id}</a></td><td>${n.fqdn}</td><td>${n.roles.join(', ')}</td>
        <td class="mono">${Object.entries(n.levels || {}).map(([k, v]) => k + '=' + v).join(' ')}</td>
        <td><${Status} s=${n.maintenance ? 'maintenance' : n.status} /></td>
        <td>${lastRun[String(n.id)] ? html`<${Status} s=${lastRun[String(n.id)]} />` : ''}</td></tr>`)}
    </table>
  </section>`;
}

// ---- a run, live

function Run({ uuid }) {
  const [run, setRun] = useState(null);
  const [error, setError] = useState(null);
  const [, setPlanPages] = useState(0);
  useEffect(() => {
    let live = true;
    let timer;
    // A sub-transaction's plan does not change: it is read once, page by
    // page; the run is drawn with its first page, each next one as it comes.
    const plans = {};
    const planOf = (sub) => (plans[sub] ||= new Promise((resolve, reject) => {
      const plan = { node_tasks: {}, skipped: {} };
      readPages('/transactions/' + sub + '/plan', (page) => {
        if (!live) return false;
        for (const [node, tasks] of Object.entries(page.node_tasks)) plan.node_tasks[node] = tasks.map(taskOutline);
        Object.assign(plan.skipped, page.skipped);
        resolve(plan);
        setPlanPages((n) => n + 1);
        return true;
      }).catch((e) => {
        reject(e);
        if (live) setError(e);
      });
    }));
    const poll = async () => {
      try {
        const top = await api('/transactions/' + uuid);
        const subs = await Promise.all((top.sub_transactions || []).map(async (s) => {
          const [tx, plan] = await Promise.all([api('/transactions/' + s.uuid), planOf(s.uuid)]);
          return { tx, plan };
        }));
        if (!live) return;
        setRun({ top, subs });
        setError(null);
        if (top.status === 'running' || top.status === 'pending') timer = setTimeout(poll, 1000);
      } catch (e) {
        if (live) setError(e);
      }
    };
    poll();
    return () => { live = false; clearTimeout(timer); };
  }, [uuid]);
  if (error) return html`<p class="error">${error.message}</p>`;
  if (!run) return html`<p class="loading">Loading…</p>`;
  const { top, subs } = run;
  return html`<h1>Run <span class="mono">${uuid}</span></h1>
    <p>Cluster <a href=${'#/clusters'}>${top.cluster_id}</a>${' · '}<span id="run-status"><${Status} s=${top.status} /></span>${' · started ' + when(top.time_start) + (top.time_end ? ' · ended ' + when(top.time_end) : ' · updating every second')}
      ${top.message ? html` · <span class="muted">${top.message}</span>` : ''}</p>
    ${subs.map(({ tx, plan }) => html`<section class="card">
      <h2>${tx.graph_type} <${Status} s=${tx.status} /></h2>
      <table class="timeline-table">
        <tr><th>Node</th><th>Status</th><th>Tasks (done, in flight, to run)</th><th>Last seen</th></tr>
        ${(tx.nodes || []).map((n) => html`<tr id=${'run-node-' + n.node}>
          <td class="num">${n.node}</td><td><${Status} s=${n.status} /></td>
          <td><div class="timeline">
            ${n.results.map((r) => html`<span class=${'task s-' + r.status} title=${r.status + ' ' + seconds(r.time_start, r.time_end) + (r.message ? ': ' + r.message : '')}>${r.task}</span>`)}
            ${n.current_task && html`<span class="task s-running" title="running">${n.current_task}</span>`}
            ${(plan.node_tasks[n.node] || []).slice(n.results.length + (n.current_task ? 1 : 0)).map((t) => html`<span class="task s-pending">${t.task.id}</span>`)}
          </div></td>
          <td>${when(n.last_seen)}</td></tr>
          ${hasWhy(plan, n.node) && html`<tr><td></td><td colspan="3">
            <${RunWhy} node=${n.node} tasks=${plan.node_tasks[n.node] || []} skipped=${plan.skipped[n.node]} /></td></tr>`}`)}
      </table></section>`)}`;
}

// taskOutline is what the views keep of a planned task: its id and its
// explanation, not its body (a Fuel node's bodies are megabytes).
const taskOutline = (t) => ({ task: { id: t.task.id }, why: t.why });

// hasWhy says whether a run's plan explains a node's tasks.
const hasWhy = (plan, node) => [...(plan.node_tasks[node] || []), ...(plan.skipped[node] || [])].some((t) => t.why);

// RunWhy is a node's explanation in a run's plan, drawn when opened.
function RunWhy({ node, tasks, skipped }) {
  const [open, setOpen] = useState(false);
  return html`<details class="run-why" id=${'run-why-' + node} onToggle=${(e) => setOpen(e.target.open)}>
    <summary>Why node ${node} runs these tasks (the run was executed with explain)</summary>
    ${open && html`<${WhyTable} tasks=${tasks} skipped=${skipped} />`}</details>`;
}

// ---- the plan

// readPages reads a listing paged by node (serialized_tasks, a transaction's
// plan), giving each page to onPage, until the last or until onPage answers
// false: the next link's marker is sent on the console's own path to the
// API, so a gateway's stage prefix stays.
async function readPages(path, onPage) {
  let marker = '';
  for (;;) {
    const page = await api(path + (marker ? (path.includes('?') ? '&' : '?') + 'marker=' + encodeURIComponent(marker) : ''));
    if (onPage(page) === false) return;
    const next = (page.links || []).find((l) => l.rel === 'next');
    if (!next) return;
    marker = new URL(next.href, location.href).searchParams.get('marker');
  }
}

// clusterTasks reads serialized_tasks (query: its parameters) page by page
// into one answer.
async function clusterTasks(env, query) {
  let all = null;
  await readPages('/clusters/' + env + '/serialized_tasks?graph_type=default' + query, (page) => {
    if (all) all.nodes.push(...page.nodes);
    else all = page;
  });
  return all;
}

function Plan({ env }) {
  // The plan is drawn from its first page on, each next page as it comes.
  const [state, setState] = useState({ loading: true });
  useEffect(() => {
    let live = true;
    const plan = { nodes: [], warnings: null, done: false };
    setState({ loading: true });
    readPages('/clusters/' + env + '/serialized_tasks?graph_type=default', (page) => {
      if (!live) return false;
      plan.warnings ||= page.warnings || [];
      plan.nodes.push(...page.nodes.map((n) => ({ ...n, tasks: n.tasks.map(taskOutline) })));
      setState({ data: { ...plan } });
      return true;
    }).then(() => live && setState({ data: { ...plan, done: true } }), (error) => live && setState({ error }));
    return () => { live = false; };
  }, [env]);
  return html`<h1>Plan of cluster ${env}</h1>
    <p class="muted">What a deployment would run on each node now, in order, and what each node skips with the reason. Nothing runs.
      Nodes with the same plan share a row; "why" explains a node's plan.</p>
    <${Loaded} state=${state}>${(p) => html`
      ${p.warnings.map((w) => html`<p class="error">${w}</p>`)}
      ${!p.done && html`<p class="loading">${p.nodes.length} nodes read, reading the next page…</p>`}
      <table class="plan">
        <tr><th>Nodes</th><th>Roles</th><th>Tasks to run</th><th>Skipped (reason)</th></tr>
        ${samePlans(p.nodes).map((g) => html`<tr>
          <td>${idRanges(g.nodes)} <span class="muted">(${g.nodes.length})</span> <a class="why-link" href=${'#/why/' + env + '/' + g.nodes[0]}>why on ${g.nodes[0]}</a></td>
          <td>${g.roles.join(', ')}</td>
          <td><div class="timeline">${g.tasks.map((t) => html`<span class="task">${t.task.id}</span>`)}</div></td>
          <td>${(g.skipped || []).map((s) => html`<div><span class="mono">${s.task}</span> <span class="muted">${s.reason}</span></div>`)}</td></tr>`)}
      </table>
      ${p.done && html`<${Changes} env=${env} nodes=${p.nodes.map((n) => n.node)} />`}`}<//>
    <h2>Graph</h2><${GraphPicture} env=${env} />`;
}

// samePlans groups the nodes whose roles, tasks and skipped tasks are the same.
function samePlans(nodes) {
  const groups = new Map();
  for (const n of nodes) {
    const key = JSON.stringify([n.roles, n.tasks.map((t) => t.task.id), n.skipped]);
    if (!groups.has(key)) groups.set(key, { ...n, nodes: [] });
    groups.get(key).nodes.push(n.node);
  }
  return [...groups.values()];
}

// idRanges writes node ids as ranges: 1-3, 7, 9-12.
function idRanges(ids) {
  const out = [];
  for (const id of ids) {
    const last = out[out.length - 1];
    if (last && /^[0-9]+$/.test(id) && Number(id) === last[1] + 1) last[1] = Number(id);
    else out.push(/^[0-9]+$/.test(id) ? [Number(id), Number(id)] : [id, null]);
  }
  return out.map(([a, b]) => (b === null || a === b ? String(a) : a + '-' + b)).join(', ');
}

// GraphPicture draws the cluster's DOT with Graphviz (WebAssembly) in a
// worker (graph-worker.js), which loads the layout engine only now: laying
// out fuel-library's graph takes seconds, in which the page's own thread
// would draw nothing.
function GraphPicture({ env }) {
  const box = useRef(null);
  const [state, setState] = useState('Drawing the graph…');
  useEffect(() => {
    let live = true;
    const worker = new Worker(new URL('./graph-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => {
      worker.terminate();
      if (!live) return;
      if (data.error) {
        setState(data.error);
        return;
      }
      const svg = new DOMParser().parseFromString(data.svg, 'image/svg+xml').documentElement;
      box.current.replaceChildren(document.importNode(svg, true));
      setState('');
    };
    worker.onerror = (e) => live && setState('The layout engine failed: ' + (e.message || 'it did not load'));
    api('/clusters/' + env + '/deploy_tasks/graph.gv', { text: true }).then((dot) => worker.postMessage(dot), (e) => live && setState(e.message));
    return () => {
      live = false;
      worker.terminate();
    };
  }, [env]);
  return html`<div><p class="muted">${state}</p><div class="graph" id="graph" ref=${box}></div></div>`;
}

// ---- why: explained plans (issue #34's reasons)

// explainBatch is how many nodes one explained request names: the API traces
// changed keys to the versions that wrote them for at most 100 nodes a request.
const explainBatch = 100;

// Changes lists, for every node, the changed data that makes tasks run there
// (as `graph plan --changes`), nodes with the same changes in one row. It is
// read when asked: explaining a plan costs more than planning it.
function Changes({ env, nodes }) {
  const [found, setFound] = useState(null);
  const live = useRef(true);
  useEffect(() => () => { live.current = false; }, []);
  const find = async () => {
    const started = performance.now();
    const groups = new Map();
    let read = 0;
    const report = (done) => setFound({ read, done, seconds: (performance.now() - started) / 1000, groups: [...groups.values()] });
    report(false);
    try {
      for (let i = 0; i < nodes.length && live.current; i += explainBatch) {
        await readPages('/clusters/' + env + '/serialized_tasks?graph_type=default&explain&nodes=' + nodes.slice(i, i + explainBatch).join(','), (page) => {
          if (!live.current) return false;
          for (const n of page.nodes) {
            const changes = changesOf(n.tasks);
            const key = JSON.stringify(changes);
            if (!groups.has(key)) groups.set(key, { changes, nodes: [] });
            groups.get(key).nodes.push(n.node);
          }
          read += page.nodes.length;
          report(false);
          return true;
        });
      }
      if (live.current) report(true);
    } catch (error) {
      if (live.current) setFound({ error });
    }
  };
  return html`<section class="card" id="changes"><h2>What changed since each node's last successful run</h2>
    ${found === null ? html`<p><button id="find-changes" onClick=${find}>Find the changes</button>
        <span class="muted"> explains every node's plan, ${explainBatch} nodes a request: the data whose change makes tasks run, who wrote it, and the tasks it makes run</span></p>`
      : found.error ? html`<p class="error">${found.error.message}</p>`
      : html`<p class="muted" id="changes-progress">${found.done ? 'All' : 'Reading…'} ${found.read} of ${nodes.length} nodes explained in ${found.seconds.toFixed(1)} s</p>
        <table class="changes"><tr><th>Nodes</th>${changeColumns}</tr>
          ${found.groups.map((g) => html`<${ChangeRows} env=${env} nodes=${g.nodes} changes=${g.changes} />`)}</table>`}
  </section>`;
}

const changeColumns = html`<th>Changed data</th><th>Old → new</th><th>Written (now)</th><th>Deployed</th><th>Makes run</th>`;

// ChangeRows are one group of nodes' changes: a row each, the nodes (when
// given) named once.
function ChangeRows({ env, nodes, changes }) {
  const who = nodes && html`<td rowspan=${Math.max(1, changes.length)}>${idRanges(nodes)} <span class="muted">(${nodes.length})</span>${' '}<a class="why-link" href=${'#/why/' + env + '/' + nodes[0]}>why on ${nodes[0]}</a></td>`;
  if (changes.length === 0) return html`<tr>${who}<td colspan="5" class="muted">no change of data makes a task run</td></tr>`;
  return changes.map((c, i) => html`<tr>${i === 0 && who}
    <td class="mono">${c.arg}</td><td><code>${quoted(c.old)}</code> → <code>${quoted(c.new)}</code></td>
    <td>${origin(c.written)}</td><td>${c.deployed ? versionOf(c.deployed) : ''}</td>
    <td>${c.tasks.join(', ')}</td></tr>`);
}

// changesOf lists a node's changed data that makes tasks run, as
// `graph plan --changes` does: the data-diff calls (changed, changedAny,
// changedAll) of its tasks' conditions that found a change, once per
// argument, with the tasks whose condition each made true.
function changesOf(tasks) {
  const byArg = new Map();
  for (const t of tasks) {
    for (const call of (t.why && t.why.condition && t.why.condition.calls) || []) {
      if (call.result !== true || !call.function.startsWith('changed')) continue;
      if (!byArg.has(call.arg)) byArg.set(call.arg, { arg: call.arg, old: call.old, new: call.new, written: call.written, deployed: call.deployed, tasks: [] });
      const change = byArg.get(call.arg);
      if (!change.tasks.includes(t.task.id)) change.tasks.push(t.task.id);
    }
  }
  return [...byArg.values()];
}

// quoted is an explained value (JSON text), or that the side was not read.
const quoted = (v) => (v === undefined || v === null ? '(not read)' : v);

// versionOf names the document version that wrote a key's value.
const versionOf = (o) => o.level + ' version ' + o.version;

// origin says which document version wrote a key's value, when and by whom.
function origin(o) {
  if (!o) return '';
  const w = o.written_by;
  return versionOf(o) + ', ' + when(o.created_at) +
    (w ? ' by ' + w.principal + ' (' + (w.role || '-') + ', request ' + (w.request_id || '-') + ')' : '');
}

// Why explains one node's plan: its changes and, for every task, what placed
// it there and why it runs or is skipped (serialized_tasks?explain&nodes=N).
function Why({ env, node }) {
  const state = useAPI(() => clusterTasks(env, '&explain&nodes=' + encodeURIComponent(node)), [env, node]);
  const pick = (e) => {
    e.preventDefault();
    location.hash = '#/why/' + env + '/' + new FormData(e.target).get('node');
  };
  return html`<h1>Why node ${node} runs what it runs</h1>
    <form class="pick" onSubmit=${pick}><a href=${'#/plan/' + env}>The plan of cluster ${env}</a>${' · '}
      <label>Another node (id) <input type="text" name="node" size="8" required /></label> <button type="submit">Explain</button></form>
    <${Loaded} state=${state}>${(p) => {
      const n = p.nodes[0];
      if (!n) return html`<p class="muted">Node ${node} has no plan in cluster ${env}.</p>`;
      const changes = changesOf(n.tasks);
      return html`${(p.warnings || []).map((w) => html`<p class="error">${w}</p>`)}
        <section class="card"><h2>Changes since its last successful run</h2>
          <table class="changes" id="why-changes"><tr>${changeColumns}</tr><${ChangeRows} changes=${changes} /></table></section>
        <h2>Its tasks, in order, then the skipped ones</h2>
        <div id="why"><${WhyTable} tasks=${n.tasks} skipped=${n.skipped} /></div>`;
    }}<//>`;
}

// WhyTable shows each task's explanation: what placed it, the decision,
// whose data $%old is, the condition's value and each data-diff call with
// the values it compared and, for a changed key, who wrote it. A filter
// keeps the tasks whose name has its text (as `graph plan --task`).
function WhyTable({ tasks, skipped }) {
  const [filter, setFilter] = useState('');
  const rows = [...tasks.map((t) => [t.task.id, '', t.why]), ...(skipped || []).map((s) => [s.task, s.reason, s.why])];
  // Whose data $%old is is the node's, the same for every task: said once.
  const data = [...new Set(rows.map(([, , why]) => why && why.data).filter(Boolean))];
  const shown = rows.filter(([task]) => task.includes(filter.trim()));
  return html`<div>${data.length === 1 && html`<p class="muted">${data[0]}</p>`}
    <p><label>Tasks whose name has <input type="text" class="task-filter" size="16" value=${filter} onInput=${(e) => setFilter(e.target.value)} /></label>
      <span class="muted"> ${shown.length} of ${rows.length}</span></p>
    <table class="why">
    <tr><th>Task</th><th>Decision</th><th>Placed by</th><th>Condition and the data it compared</th></tr>
    ${shown.map(([task, reason, why]) => html`<tr class=${reason ? 's-skipped' : ''}>
      <td class="mono">${task}</td>
      <td>${why ? why.decision : reason}</td>
      <td>${why && why.placed}</td>
      <td>${why && html`${data.length > 1 && why.data && html`<div class="muted">${why.data}</div>`}
        ${why.condition && html`<div>condition <code>${why.condition.expression}</code> is <code>${show(why.condition.value)}</code></div>
          ${(why.condition.calls || []).map((c) => html`<div class="call"><code>${c.call}</code> compared <code>${c.arg}</code>:${' '}
            <code>${quoted(c.old)}</code> → <code>${quoted(c.new)}</code>, answered <code>${show(c.result)}</code>
            ${c.written && html`<div class="muted">written at ${origin(c.written)}${c.deployed ? '; deployed: ' + versionOf(c.deployed) : ''}</div>`}</div>`)}`}`}</td>
    </tr>`)}</table></div>`;
}

// ---- hierarchy and explain

function Hierarchy({ env, node }) {
  const state = useAPI(async () => {
    const [environment, levels, definitions, nodes] = await Promise.all([
      api('/config/environments/' + env), api('/config/environments/' + env + '/hierarchy_levels'),
      api('/config/resource_definitions'), allNodes(),
    ]);
    return { environment, levels, definitions, nodes: nodes.filter((n) => String(n.environment_id) === String(env)) };
  }, [env]);
  return html`<h1>Hierarchy of environment ${env}</h1>
    <${Loaded} state=${state}>${(d) => html`<${Explain} first=${node} ...${d} />`}<//>`;
}

function Explain({ first, environment, levels, definitions, nodes }) {
  const [node, setNode] = useState(first || (nodes.length ? String(nodes[0].id) : ''));
  const [resource, setResource] = useState(definitions.length ? definitions[0].name : '');
  const picked = nodes.find((n) => String(n.id) === node);
  const explained = useAPI(async () => {
    if (!picked || !resource) return null;
    // At 1.3 the path names the environment and the node by UUID.
    const path = [environment.uuid, ...environment.hierarchy_levels.map((l) => l + '/' + (levelpathNode(l) ? picked.uuid : picked.levels[l]))].join('/');
    return api('/config/environments/' + path + '/resources/' + encodeURIComponent(resource) + '/values?effective&explain', { headers: v13 });
  }, [node, resource]);
  return html`
    <section class="card"><h2>Levels</h2><div class="chain"><span class="level">global</span>
      ${levels.map((l) => html`→ <span class="level">${l.name} <span class="muted">(${l.values.length} values)</span></span>`)}</div>
      ${picked && html`<p>Node ${picked.id} (${picked.fqdn}) reads, from the broadest level to its own:${' '}<span class="mono">/ → ${environment.hierarchy_levels.map((l) => l + '=' + (levelpathNode(l) ? picked.id : picked.levels[l])).join(' → ')}</span></p>`}</section>
    <div class="row">
      <label>Node<select id="explain-node" value=${node} onChange=${(e) => setNode(e.target.value)}>
        ${nodes.map((n) => html`<option value=${String(n.id)}>${n.id} ${n.fqdn}</option>`)}</select></label>
      <label>Resource<select value=${resource} onChange=${(e) => setResource(e.target.value)}>
        ${definitions.map((d) => html`<option value=${d.name}>${d.name}</option>`)}</select></label>
    </div>
    ${picked && resource && html`<${Layers} environment=${environment} node=${picked} resource=${resource} />`}
    <h2>Effective document, each key with its provenance</h2>
    <${Loaded} state=${explained}>${(x) => (x ? html`<table class="explain">
      <tr><th>Key</th><th>Value</th><th>From</th><th>Written by</th><th>Shadows</th></tr>
      ${Object.entries(x.keys).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => html`<tr>
        <td class="mono">${k}</td><td><pre>${show(v.value)}</pre></td>
        <td class="mono">${v.from.level} ${v.from.kind} v${v.from.version}</td>
        <td>${v.from.written_by ? v.from.written_by.principal + ', ' + when(v.from.written_by.time) : ''}</td>
        <td>${v.shadows.map((s) => html`<div class="mono">${s.level} v${s.version}: ${show(s.value)}</div>`)}</td></tr>`)}
    </table>` : html`<p class="muted">No node in this environment.</p>`)}<//>`;
}

// Layers shows the document stored at each level of a node's path, from the
// global one to the node's own: what the effective document merges.
function Layers({ environment, node, resource }) {
  const paths = [[]];
  for (const l of environment.hierarchy_levels) paths.push([...paths[paths.length - 1], [l, levelpathNode(l) ? String(node.id) : node.levels[l]]]);
  const state = useAPI(() => Promise.all(paths.map((p) => api('/config/environments/' + [environment.id, ...p.map(([l, v]) => l + '/' + v)].join('/') +
    '/resources/' + encodeURIComponent(resource) + '/values'))), [node.id, resource]);
  return html`<h2>The documents it merges, broadest first</h2><${Loaded} state=${state}>${(docs) => html`<div class="layers">
    ${paths.map((p, i) => html`<section class="card layer"><h3 class="mono">/${p.map(([l, v]) => l + '/' + v).join('/')}</h3>
      ${Object.keys(docs[i]).length === 0 ? html`<p class="muted">nothing stored</p>` : html`<pre>${JSON.stringify(docs[i], null, 2)}</pre>`}</section>`)}</div>`}<//>`;
}

// levelpathNode reports whether a level is the node level (spec 000: "nodes" or "node").
const levelpathNode = (name) => name === 'nodes' || name === 'node';

// ---- history and diff

function History({ env }) {
  const state = useAPI(async () => {
    const [environment, levels, definitions, nodes] = await Promise.all([
      api('/config/environments/' + env), api('/config/environments/' + env + '/hierarchy_levels'),
      api('/config/resource_definitions'), allNodes(),
    ]);
    return { environment, levels, definitions, nodes };
  }, [env]);
  return html`<h1>History of environment ${env}</h1><${Loaded} state=${state}>${(d) => html`<${Versions} ...${d} />`}<//>`;
}

// documentPaths lists the level paths that hold documents: the global one and
// every stored value of each level under its parent's.
function documentPaths(environment, levels) {
  const paths = [[]];
  let frontier = [[]];
  for (const name of environment.hierarchy_levels) {
    const level = levels.find((l) => l.name === name);
    const next = [];
    for (const p of frontier) for (const v of level ? level.values : []) next.push([...p, [name, v]]);
    paths.push(...next);
    frontier = next;
  }
  return paths;
}

function Versions({ environment, levels, definitions, nodes }) {
  const paths = documentPaths(environment, levels);
  const [at, setAt] = useState(0);
  const [resource, setResource] = useState(definitions.length ? definitions[0].name : '');
  const [pair, setPair] = useState(null);
  const path = paths[at] || [];
  const urlPath = [environment.id, ...path.map(([l, v]) => l + '/' + v)].join('/');
  const versions = useAPI(async () => {
    const list = await api('/config/environments/' + urlPath + '/resources/' + encodeURIComponent(resource) + '/values/versions');
    const sorted = list.slice().sort((a, b) => a.version - b.version);
    setPair(sorted.length > 1 ? [sorted[sorted.length - 2].version, sorted[sorted.length - 1].version] : null);
    return sorted;
  }, [at, resource]);
  const diff = useAPI(async () => {
    if (!pair) return null;
    // At 1.3 a diff names the environment and a node by UUID.
    const levelsOf = Object.fromEntries(path.map(([l, v]) => [l, levelpathNode(l) ? (nodes.find((n) => String(n.id) === v) || { uuid: v }).uuid : v]));
    return api('/config/diff', { method: 'POST', headers: v13, body: {
      from: { environment: environment.uuid, levels: levelsOf, resource, kind: 'values', version: pair[0] }, to: { version: pair[1] },
    } });
  }, [pair && pair.join(), at, resource]);
  const choose = (i) => (e) => { const p = [...pair]; p[i] = Number(e.target.value); setPair(p); };
  return html`<div class="row">
      <label>Document<select id="history-path" value=${at} onChange=${(e) => setAt(Number(e.target.value))}>
        ${paths.map((p, i) => html`<option value=${i}>/${p.map(([l, v]) => l + '/' + v).join('/')}</option>`)}</select></label>
      <label>Resource<select value=${resource} onChange=${(e) => setResource(e.target.value)}>
        ${definitions.map((d) => html`<option value=${d.name}>${d.name}</option>`)}</select></label>
    </div>
    <${Loaded} state=${versions}>${(list) => html`<h2>Versions</h2><table class="versions">
      <tr><th>Version</th><th>Written</th><th>By</th><th>Size</th></tr>
      ${list.slice().reverse().map((v) => html`<tr><td class="num">${v.version}</td><td>${when(v.created_at)}</td>
        <td>${v.written_by ? v.written_by.principal : ''}</td><td class="num">${v.size} B</td></tr>`)}</table>
      ${pair ? html`<h2>Diff</h2><div class="row">
          <label>From<select id="diff-from" value=${pair[0]} onChange=${choose(0)}>${list.map((v) => html`<option value=${v.version}>${v.version}</option>`)}</select></label>
          <label>To<select id="diff-to" value=${pair[1]} onChange=${choose(1)}>${list.map((v) => html`<option value=${v.version}>${v.version}</option>`)}</select></label></div>
        <${Loaded} state=${diff}>${(d) => d && html`<${DiffTable} diff=${d} />`}<//>`
        : html`<p class="muted">One version or none: nothing to compare.</p>`}`}<//>`;
}

function DiffTable({ diff }) {
  const rows = [
    ...Object.entries(diff.added).map(([k, v]) => ['added', k, '', v]),
    ...Object.entries(diff.removed).map(([k, v]) => ['removed', k, v, '']),
    ...Object.entries(diff.changed).map(([k, c]) => ['changed', k, c.from, c.to]),
  ].sort((a, b) => a[1].localeCompare(b[1]));
  if (rows.length === 0) return html`<p class="muted" id="diff">The two versions are the same.</p>`;
  return html`<table class="diff" id="diff"><tr><th></th><th>Key</th><th>Before</th><th>After</th></tr>
    ${rows.map(([kind, k, a, b]) => html`<tr class=${'s-' + kind}><td>${kind}</td><td class="mono">${k}</td>
      <td><pre>${kind === 'added' ? '' : show(a)}</pre></td><td><pre>${kind === 'removed' ? '' : show(b)}</pre></td></tr>`)}</table>`;
}

// ---- audit

function Audit({ env }) {
  const [before, setBefore] = useState(['']);
  const state = useAPI(() => api('/audit?limit=50' + (env ? '&environment=' + env : '') + (before[0] ? '&before=' + before[0] : '')), [env, before[0]]);
  return html`<h1>Audit log${env ? ' of environment ' + env : ''}</h1><${Loaded} state=${state}>${(page) => html`
    <table class="audit"><tr><th>Time</th><th>Who</th><th>Request</th><th>Status</th><th>Environment</th><th>Version</th></tr>
      ${page.records.map((r) => html`<tr><td>${when(r.time)}</td><td>${r.principal} <span class="muted">${r.role}</span></td>
        <td class="mono">${r.method} ${r.path}</td><td class="num">${r.status}</td><td>${r.environment || ''}</td><td class="num">${r.version || ''}</td></tr>`)}
    </table>
    <p>${before.length > 1 && html`<button class="link" onClick=${() => setBefore(before.slice(1))}>Newer</button> `}
      ${page.next && html`<button class="link" onClick=${() => setBefore([page.next, ...before])}>Older</button>`}</p>`}<//>`;
}

// ---- a node's own view (node users)

function OwnNode({ session }) {
  const name = session.node_names.find((n) => /^[0-9]+$/.test(n)) || session.node_names[0];
  const [resource, setResource] = useState('astute');
  const node = useAPI(() => api('/nodes/' + name), [name]);
  const n = node.data && node.data.node;
  const doc = useAPI(async () => n && api('/config/environments/' + n.environment_id + '/nodes/' + n.id + '/resources/' + encodeURIComponent(resource) + '/values?effective&show_lookup'),
    [n && n.id, resource]);
  return html`<h1>Node ${name}</h1><${Loaded} state=${node}>${({ node: n }) => html`<section class="card" id="own-node">
      <p>${n.fqdn} · environment ${n.environment_id} · roles ${n.roles.join(', ')} · <${Status} s=${n.status} /></p>
      <p class="mono">${Object.entries(n.levels || {}).map(([k, v]) => k + '=' + v).join(' ')}</p></section>`}<//>
    <div class="row"><label>Resource<input type="text" value=${resource} onChange=${(e) => setResource(e.target.value)} /></label></div>
    <h2>Effective document and the level of each key</h2>
    <${Loaded} state=${doc}>${(d) => d && html`<table class="lookup"><tr><th>Key</th><th>Value</th><th>From</th></tr>
      ${Object.entries(d).sort(([a], [b]) => a.localeCompare(b)).map(([k, [v, level]]) => html`<tr><td class="mono">${k}</td><td><pre>${show(v)}</pre></td><td class="mono">${level}</td></tr>`)}
    </table>`}<//>`;
}

// ---- the shell

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  return { view: parts[0] || '', arg: parts.slice(1).join('/') };
}

function App() {
  const [session, setSession] = useState(loadSession());
  const [where, setWhere] = useState(route());
  useEffect(() => {
    const onHash = () => setWhere(route());
    const onSession = () => setSession(loadSession());
    window.addEventListener('hashchange', onHash);
    window.addEventListener('tuningbox-session', onSession);
    return () => { window.removeEventListener('hashchange', onHash); window.removeEventListener('tuningbox-session', onSession); };
  }, []);
  if (!session) return html`<${Login} onLogin=${setSession} />`;
  const logout = async () => {
    try { await api('/sessions', { method: 'DELETE' }); } catch { /* ended already */ }
    sessionStorage.removeItem(sessionKey);
    setSession(null);
  };
  const isNode = session.role === 'node';
  let view;
  if (isNode) view = html`<${OwnNode} session=${session} />`;
  else if (where.view === 'runs') view = html`<${Run} uuid=${where.arg} />`;
  else if (where.view === 'plan') view = html`<${Plan} env=${where.arg} />`;
  else if (where.view === 'why') view = html`<${Why} env=${where.arg.split('/')[0]} node=${where.arg.split('/')[1]} />`;
  else if (where.view === 'config') view = html`<${Hierarchy} env=${where.arg.split('/')[0]} node=${where.arg.split('/')[1]} />`;
  else if (where.view === 'history') view = html`<${History} env=${where.arg} />`;
  else if (where.view === 'audit') view = html`<${Audit} env=${where.arg} />`;
  else view = html`<${Clusters} />`;
  return html`<header>
      <span class="brand">tuningbox</span>
      ${!isNode && html`<nav><a href="#/clusters">Clusters</a><a href="#/audit">Audit log</a></nav>`}
      <span class="who" id="who">${session.user} (${session.role})</span>
      <button class="link" id="logout" onClick=${logout}>Log out</button>
    </header><main id="view" data-view=${isNode ? 'node' : where.view || 'clusters'}>${view}</main>`;
}

const root = document.getElementById('app');
root.replaceChildren(); // the page's "Loading" line
render(html`<${App} />`, root);
