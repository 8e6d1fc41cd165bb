// The reference: ask the real Nx where it puts its sockets and binding cache.
// usage: node resolve.js <nx install dir> [generation: legacy|ts|native]
//        node resolve.js --serve <nx install dir> [generation]
// Runs in the workspace (cwd), prints one JSON document. Nx creates what it
// decides on, exactly as it would for a real command. Without a generation it
// is told from the installed release: ≤ 23.1.1 legacy, 23.x ts, else native.
//
// --serve answers many states in one process (tests/oracle/batch_driver.py):
// one request a line on stdin, {"cwd": <hex bytes>, "env": {...}}; the answer,
// one line on descriptor 3, is {"stdout": <what the resolver printed>} or
// {"failure": <why>}. Each request starts as a fresh process would: the
// environment replaced by the request's, the working directory set, and every
// JavaScript module of Nx loaded anew (Nx settles its directories when its
// modules load); only the native binding stays loaded, as node cannot load it
// twice. Between requests the process waits in / with an empty environment.
'use strict';
function resolveHere(nxDir, named) {
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
  return out;
}

if (process.argv[2] !== '--serve') {
  const [nxDir, named] = process.argv.slice(2);
  process.stdout.write(JSON.stringify(resolveHere(nxDir, named)) + '\n');
} else {
  serve(process.argv[3], process.argv[4]);
}

function serve(nxDir, named) {
  const fs = require('fs');
  const Module = require('module');
  const pristine = { load: Module._load, resolveFilename: Module._resolveFilename };
  const write = process.stdout.write;
  const answer = (value) => {
    const bytes = Buffer.from(JSON.stringify(value) + '\n');
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(3, bytes, done);
  };
  const fresh = () => {
    // What a new process would not have: Nx's modules (its native binding excepted), node's resolution
    // cache, and the loader hooks Nx installs (its native index wraps Module._load on every load).
    for (const key of Object.keys(require.cache)) {
      if (key !== __filename && !key.endsWith('.node')) delete require.cache[key];
    }
    for (const key of Object.keys(Module._pathCache)) delete Module._pathCache[key];
    Module._load = pristine.load;
    Module._resolveFilename = pristine.resolveFilename;
    for (const key of Object.keys(process.env)) delete process.env[key];
  };
  fresh();
  process.chdir('/');
  const chunk = Buffer.alloc(65536);
  let pending = Buffer.alloc(0);
  for (;;) {
    const newline = pending.indexOf(10);
    if (newline < 0) {
      const got = fs.readSync(0, chunk, 0, chunk.length, null);
      if (got === 0) return;
      pending = Buffer.concat([pending, chunk.subarray(0, got)]);
      continue;
    }
    const request = JSON.parse(pending.subarray(0, newline).toString());
    pending = pending.subarray(newline + 1);
    const printed = [];
    try {
      Object.assign(process.env, request.env);
      // The directory by its bytes (a name need not be UTF-8): opened, then entered through its descriptor.
      const fd = fs.openSync(Buffer.from(request.cwd, 'hex'), 'r');
      try {
        process.chdir(`/proc/self/fd/${fd}`);
      } finally {
        fs.closeSync(fd);
      }
      process.stdout.write = (text, encoding, callback) => {
        printed.push(String(text));
        const done = typeof encoding === 'function' ? encoding : callback;
        if (typeof done === 'function') done();
        return true;
      };
      process.stdout.write(JSON.stringify(resolveHere(nxDir, named)) + '\n');
      answer({ stdout: printed.join('') });
    } catch (e) {
      answer({ failure: String(e && e.stack), stdout: printed.join('') });
    } finally {
      process.stdout.write = write;
      process.chdir('/');
      fresh();
    }
  }
}
