#!/usr/bin/env node
// Starts through the CLI's boot (src/cli/boot.ts): a large `lint` FILE is read before the CLI's code loads, and the
// code is compiled from the code cache the build made. A build without the boot loads the CLI directly.
let boot;
try {
  boot = require('../dist/cli-boot.js');
} catch {
  boot = undefined;
}
(boot ? boot.start(process.argv.slice(2)) : require('../dist/cli.js')).runFromProcess();
