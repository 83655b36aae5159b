// Download progress as the Translator API reports it: 'downloadprogress'
// events on the monitor whose `loaded` is a fraction from 0 to 1 (total 1,
// floored to 1/65536, never repeated), with the byte counts in extra fields.

const EventBase = typeof ProgressEvent === 'function' ? ProgressEvent
  : typeof Event === 'function' ? Event : class { constructor(type) { this.type = type; } };

export class DownloadProgressEvent extends EventBase {
  constructor(type, { loaded = 0, bytesLoaded = 0, bytesTotal = 0, file = null } = {}) {
    super(type, { loaded, total: 1, lengthComputable: true });
    const own = (value) => ({ value, enumerable: true });
    if (EventBase !== globalThis.ProgressEvent) {
      Object.defineProperties(this, { loaded: own(loaded), total: own(1), lengthComputable: own(true) });
    }
    Object.defineProperties(this, { bytesLoaded: own(bytesLoaded), bytesTotal: own(bytesTotal), file: own(file) });
  }
}

// The object handed to `monitor(m)`: an EventTarget with 'downloadprogress'.
export class CreateMonitor extends EventTarget {
  constructor() {
    super();
    this.ondownloadprogress = null;
  }

  dispatchEvent(event) {
    if (event.type === 'downloadprogress' && typeof this.ondownloadprogress === 'function') this.ondownloadprogress(event);
    return super.dispatchEvent(event);
  }
}

const STEPS = 0x10000;

// Turns byte progress ({ loaded, total, file }, as the loader reports it over
// the files it downloads) into the monitor's events: 0 first, then each new
// fraction, 1 at finish(). Counts from the bytes already in when it starts
// (another create's download of the same model), as the API's total does.
// Nothing is fired once `signal` has aborted.
export function progressReporter(monitor, signal) {
  let base = null;
  let last = -1;
  let bytes = { loaded: 0, total: 0, file: null };
  const fire = (fraction) => {
    if (fraction <= last || signal?.aborted) return;
    last = fraction;
    monitor.dispatchEvent(new DownloadProgressEvent('downloadprogress', {
      loaded: fraction, bytesLoaded: bytes.loaded, bytesTotal: bytes.total, file: bytes.file,
    }));
  };
  return {
    bytes(p) {
      bytes = p;
      base ??= p.loaded;
      const span = p.total - base;
      const raw = span > 0 ? (p.loaded - base) / span : 0;
      fire(Math.min(STEPS - 1, Math.floor(raw * STEPS)) / STEPS); // 1 only at finish()
    },
    finish() {
      fire(0);
      fire(1);
    },
  };
}
