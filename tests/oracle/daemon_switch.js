// The reference for the daemon verdict: the release's own DaemonClient.enabled(), state by state.
// usage: node daemon_switch.js <nx install dir> <cells.json>
// cells.json: [{"ws": "/tmp/cells/3", "env": {"CI": "true", ...}}, ...]. One process answers every cell: the
// client module is loaded once; for each cell the environment is replaced, the workspace root set (as Nx's own
// setWorkspaceRoot does for lerna), the daemon directory recomputed by Nx's own helper, and a new DaemonClient
// (which reads nx.json as it is constructed) asked. Prints one line per cell: <<<CELL <index> <json>.
'use strict';
const path = require('path');
const fs = require('fs');
const [nxDir, cellsFile] = process.argv.slice(2);
const req = (m) => require(require.resolve(m, { paths: [nxDir] }));
const cells = JSON.parse(fs.readFileSync(cellsFile, 'utf8'));
const base = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG };

const root = req('nx/src/utils/workspace-root');
const cacheDir = req('nx/src/utils/cache-directory');
const tmpDir = req('nx/src/daemon/tmp-dir');
const client = req('nx/src/daemon/client/client');
const isCi = req('nx/src/utils/is-ci');
const isSandbox = req('nx/src/utils/is-sandbox');
const mismatch = req('nx/src/daemon/is-nx-version-mismatch');
const nxJson = req('nx/src/config/nx-json');
const version = req('nx/package.json').version;

function answer(cell) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, base, cell.env);
  process.chdir(cell.ws);
  root.setWorkspaceRoot(cell.ws);
  tmpDir.DAEMON_DIR_FOR_CURRENT_WORKSPACE = path.join(cacheDir.workspaceDataDirectoryForWorkspace(cell.ws), 'd');
  const c = new client.DaemonClient();
  const option = c.nxJson ? c.nxJson.useDaemonProcess : undefined;
  return {
    version,
    enabled: c.enabled(),
    ci: !!isCi.isCI(),
    sandbox: isSandbox.isSandbox(),
    mismatch: mismatch.isNxVersionMismatch(),
    disabled: tmpDir.isDaemonDisabled(),
    has_nx_json: nxJson.hasNxJson(cell.ws),
    use_daemon_process: option === undefined ? 'unset' : option === true ? 'true' : option === false ? 'false' : 'other',
    daemon_dir: tmpDir.DAEMON_DIR_FOR_CURRENT_WORKSPACE,
  };
}

const out = [];
cells.forEach((cell, index) => {
  let result;
  try {
    result = answer(cell);
  } catch (e) {
    result = { error: String(e && e.message).split('\n')[0] };
  }
  out.push(`<<<CELL ${index} ${JSON.stringify(result)}`);
});
process.stdout.write(out.join('\n') + '\n');
