// Preload (`node --require …`) that records the remote address of every outgoing socket a process opens, one JSON
// line per connect, to the file named by TOKENSCOPE_CONNECTION_LOG. Tests use it to prove what a command reached.
'use strict';
const net = require('node:net');
const { appendFileSync } = require('node:fs');

const log = process.env.TOKENSCOPE_CONNECTION_LOG;
if (log) {
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    // connect(options[, cb]), connect(port[, host][, cb]), connect(path[, cb]); Node also passes [options, cb] arrays.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const entry =
      first && typeof first === 'object'
        ? { host: first.host ?? (first.path ? undefined : 'localhost'), port: first.port, path: first.path }
        : typeof first === 'string' && Number.isNaN(Number(first))
          ? { path: first }
          : { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) };
    appendFileSync(log, JSON.stringify(entry) + '\n');
    return connect.apply(this, args);
  };
}
