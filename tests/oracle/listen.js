// Inside a sandbox: ask the real Nx for its daemon socket path, listen there, connect.
// usage: node listen.js <nx install dir> <generation: ts|native>; prints OK <path> and exits 0.
'use strict';
const net = require('net');
const [nxDir, generation] = process.argv.slice(2);
const req = (m) => require(require.resolve(m, { paths: [nxDir] }));
let path;
try {
  if (generation === 'native') {
    const details = req('nx/src/native').resolveDaemonSocketPath(process.cwd());
    if (details.invalidReason) throw new Error(details.invalidReason);
    path = details.path;
  } else {
    path = req('nx/src/daemon/socket-utils').getFullOsSocketPath();
  }
} catch (e) {
  console.log('RESOLVE-FAILED', String(e && e.message).split('\n')[0]);
  process.exit(3);
}
const server = net.createServer((c) => c.end('pong'));
server.on('error', (e) => { console.log('LISTEN-FAILED', e.code, path); process.exit(4); });
server.listen(path, () => {
  net.connect(path)
    .on('data', () => { console.log('OK', path); process.exit(0); })
    .on('error', (e) => { console.log('CONNECT-FAILED', e.code, path); process.exit(5); });
});
