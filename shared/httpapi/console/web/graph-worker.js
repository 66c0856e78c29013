// The console's layout worker: it lays out a DOT graph with Graphviz
// (WebAssembly, vendor/graphviz.js, loaded with the worker) and answers the
// SVG, off the page's thread.
import { Graphviz } from './vendor/graphviz.js';

const graphviz = Graphviz.load();

onmessage = async ({ data: dot }) => {
  try {
    postMessage({ svg: (await graphviz).dot(dot) });
  } catch (e) {
    postMessage({ error: 'Graphviz: ' + e.message });
  }
};
