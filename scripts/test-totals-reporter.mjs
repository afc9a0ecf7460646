// A reporter for Node's test runner that scripts/test.mjs adds beside `spec`: it appends the runner's closing figures
// (`tests N`, `pass N`, `fail N`, `cancelled N`, `skipped N`, `todo N`) to the file named by TOKENSCOPE_TEST_TOTALS,
// so the test command can add up its passes into one closing line. A synchronous Transform, written as each event
// arrives: with --test-force-exit the runner may exit right after its last event, before an async reporter or a file
// destination got to write it.
import { appendFileSync } from 'node:fs';
import { Transform } from 'node:stream';

const FIGURE = /^(tests|pass|fail|cancelled|skipped|todo) \d+$/;

export default new Transform({
  writableObjectMode: true,
  transform(event, _encoding, done) {
    const file = process.env.TOKENSCOPE_TEST_TOTALS;
    if (file && event.type === 'test:diagnostic' && event.data?.nesting === 0 && FIGURE.test(event.data.message))
      appendFileSync(file, `${event.data.message}\n`);
    done();
  },
});
