// One job in the engine at a time. JobLock is the one place jobs wait for
// each other: the engine's side takes it for every job (runner.js: the
// calls of translators and detectors, the load's warm-up, dispose), so jobs
// never interleave inside the engine, whichever thread sends them (a page's
// end: js/host/queue.js JobQueue).

export class JobLock {
  constructor() {
    this.last = Promise.resolve();
  }

  // Runs fn once every job taken before has ended; resolves with its value.
  run(fn) {
    const job = this.last.then(fn);
    this.last = job.catch(() => {});
    return job;
  }
}
