/**
 * The plugin calls `window.setTimeout` and friends (Obsidian's popout-window rule); in Node tests
 * `window` is the global object, with no-op DOM event methods. Tests may add to it (WebSocket).
 */
const g = globalThis as any;
g.window ??= g;
g.window.addEventListener ??= () => undefined;
g.window.removeEventListener ??= () => undefined;
