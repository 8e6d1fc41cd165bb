// The reference: ask the real Nx where it puts its sockets and binding cache.
// usage: node resolve.js <nx install dir> [generation: legacy|ts|native]
// Runs in the workspace (cwd), prints one JSON document. Nx creates what it
// decides on, exactly as it would for a real command. Without a generation it
// is told from the installed release: ≤ 23.1.1 legacy, 23.x ts, else native.
'use strict';
const [nxDir, named] = process.argv.slice(2);
const req = (m) => require(require.resolve(m, { paths: [nxDir] }));
const version = req('nx/package.json').version;
function generationOf(v) {
  const [major, minor, patch] = v.split(/[.-]/).map(Number);
  const n = major * 1e6 + minor * 1e3 + patch;
  return n <= 23001001 ? 'legacy' : n < 24000000 ? 'ts' : 'native';
}
const generation = named || generationOf(version);

const PLUGIN_ID = '1234567-1-abcdef01';
const FORKED_ID = generation === 'native' ? '1234567-ready-1' : '1234567-1';
const out = { generation, version, pid: process.pid, sockets: {}, native_cache: null, native_cache_error: null };

function capture(fn) {
  try {
    return fn();
  } catch (e) {
    return { error: String(e && e.message).split('\n')[0], reason: e && e.reason, code: e && e.code, name: e && e.name };
  }
}

// As the CLI starts: the workspace root, then its .env files into the environment.
const ws = req('nx/src/utils/workspace-root').workspaceRoot;
req('nx/src/utils/dotenv').loadRootEnvFiles(ws);

// The binding cache next: Nx places the binding before anything else runs.
if (process.env.NX_SKIP_NATIVE_FILE_CACHE === 'true') {
  out.native_cache = null;
} else if (generation === 'legacy') {
  out.native_cache = capture(() => req('nx/src/native/native-file-cache-location').getNativeFileCacheLocation());
} else {
  const cache = capture(() => req('nx/src/native/native-file-cache-location').ensureSecureNativeFileCacheLocation());
  if (cache && cache.error) out.native_cache_error = cache; else out.native_cache = cache;
}
// Only the socket resolution from here on: no copy of the binding.
process.env.NX_SKIP_NATIVE_FILE_CACHE = 'true';

// The workspace data directory, as the CLI settles it on import (24.0.6 refuses an untrusted one there).
const data = capture(() => req('nx/src/utils/cache-directory').workspaceDataDirectory);
out.workspace_data = data && data.error ? null : data;
out.workspace_data_error = data && data.error ? data : null;

if (generation === 'native') {
  const n = req('nx/src/native');
  out.sockets.daemon = capture(() => n.resolveDaemonSocketPath(ws));
  out.sockets.forked = capture(() => n.resolveForkedProcessSocketPath(ws, FORKED_ID));
  out.sockets.plugin = capture(() => n.resolvePluginSocketPath(ws, PLUGIN_ID));
  out.sockets.console = capture(() => n.resolveNxConsoleSocketPath(ws));
} else {
  const tmp = capture(() => req('nx/src/daemon/tmp-dir'));
  const utils = capture(() => req('nx/src/daemon/socket-utils'));
  const one = (dirFn, pathFn) => {
    const dir = capture(dirFn);
    if (dir && dir.error) return dir;
    const details = { dir, path: null, tooLong: false };
    if (generation === 'ts') {
      const cause = tmp.getSocketDirFallbackCause();
      details.usedWorkspaceFallback = dir === tmp.DAEMON_DIR_FOR_CURRENT_WORKSPACE;
      details.refusedConfiguredDir = tmp.getRefusedConfiguredSocketDir();
      details.fallbackCause = cause ? String(cause.message) : undefined;
    }
    const p = capture(pathFn);
    if (p && p.error) {
      if (/exceeds the maximum socket length/.test(p.error)) details.tooLong = true;
      else return p;
    } else details.path = p;
    return details;
  };
  if (tmp.error) {
    for (const k of ['daemon', 'forked', 'plugin']) out.sockets[k] = tmp;
  } else if (generation === 'ts') {
    out.sockets.daemon = one(() => tmp.getSocketDir(), () => utils.getFullOsSocketPath());
    out.sockets.forked = one(() => tmp.getSocketDir(), () => utils.getForkedProcessOsSocketPath(FORKED_ID));
    out.sockets.plugin = one(() => tmp.getPluginSocketDir(), () => utils.getPluginOsSocketPath(PLUGIN_ID));
  } else {
    out.sockets.daemon = one(() => tmp.getSocketDir(), () => utils.getFullOsSocketPath());
    out.sockets.forked = one(() => tmp.getSocketDir(), () => utils.getForkedProcessOsSocketPath(FORKED_ID));
    out.sockets.plugin = one(() => tmp.getSocketDir(true), () => utils.getPluginOsSocketPath(PLUGIN_ID));
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
