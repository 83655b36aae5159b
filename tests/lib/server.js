// A scripts/serve.js static server on a free localhost port for the length of
// fn(baseUrl, server): the browser tests and benchmarks serve the demo with it.
import { createStaticServer } from '../../scripts/serve.js';

export async function withServer(options, fn) {
  const server = createStaticServer(options);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://localhost:${server.address().port}/`, server);
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
}
