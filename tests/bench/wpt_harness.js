// A stand-in for web-platform-tests' testharness.js and testdriver.js, as
// much of them as the ai/language_detection/ tests call (residual-mt's own,
// for tests/bench/wpt_detector.js): promise_test registers a subtest, the
// asserts throw, __runSubtests() runs them in order and returns
// [{ name, status: 'PASS' | 'FAIL', message }]. test_driver.bless() gives the
// page a user activation by a real click (the runner's __click binding).
/* eslint-disable no-unused-vars, camelcase */
(() => {
  const subtests = [];
  const fail = (message) => { throw new Error(message); };
  const show = (v) => (typeof v === 'string' ? JSON.stringify(v) : String(v));
  Object.assign(globalThis, {
    promise_test(fn, name) { subtests.push({ fn, name }); },
    assert_true: (v, m = '') => v === true || fail(`assert_true: ${m} expected true got ${show(v)}`),
    assert_false: (v, m = '') => v === false || fail(`assert_false: ${m} expected false got ${show(v)}`),
    assert_equals: (a, b, m = '') => Object.is(a, b) || fail(`assert_equals: ${m} expected ${show(b)} but got ${show(a)}`),
    assert_not_equals: (a, b, m = '') => !Object.is(a, b) || fail(`assert_not_equals: ${m} got disallowed value ${show(a)}`),
    assert_greater_than: (a, b, m = '') => a > b || fail(`assert_greater_than: ${m} expected a number greater than ${b} but got ${a}`),
    assert_greater_than_equal: (a, b, m = '') => a >= b || fail(`assert_greater_than_equal: ${m} expected a number >= ${b} but got ${a}`),
    assert_less_than: (a, b, m = '') => a < b || fail(`assert_less_than: ${m} expected a number less than ${b} but got ${a}`),
    assert_less_than_equal: (a, b, m = '') => a <= b || fail(`assert_less_than_equal: ${m} expected a number <= ${b} but got ${a}`),
    assert_in_array: (v, list, m = '') => list.includes(v) || fail(`assert_in_array: ${m} ${show(v)} not in ${JSON.stringify(list)}`),
    assert_own_property: (o, p, m = '') => Object.hasOwn(o, p) || fail(`assert_own_property: ${m} no ${p}`),
    assert_array_equals(a, b, m = '') {
      if (a?.length !== b.length || b.some((v, i) => !Object.is(a[i], v))) fail(`assert_array_equals: ${m} ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    },
    assert_unreached: (m = '') => fail(`assert_unreached: ${m}`),
    assert_implements_optional: (v, m = '') => v || fail(`PRECONDITION_FAILED: ${m}`),
    // locale-util.js's check: a tag is in the form Intl canonicalizes it to
    assert_is_canonical: (tag) => Intl.getCanonicalLocales(tag)[0] === tag || fail(`assert_is_canonical: ${tag}`),
    async promise_rejects_dom(t, name, promise) {
      try { await promise; } catch (e) {
        if (e?.name !== name) fail(`promise_rejects_dom: expected ${name} but got ${e?.name}: ${e?.message}`);
        return;
      }
      fail(`promise_rejects_dom: expected ${name} but it resolved`);
    },
    async promise_rejects_exactly(t, error, promise) {
      try { await promise; } catch (e) {
        if (e !== error) fail(`promise_rejects_exactly: got ${e?.name}: ${e?.message}`);
        return;
      }
      fail('promise_rejects_exactly: it resolved');
    },
    test_driver: { bless: () => globalThis.__click() },
    async __runSubtests() {
      const results = [];
      for (const { fn, name } of subtests) {
        const t = { step_func: (f) => f, add_cleanup() {} };
        try {
          await fn(t);
          results.push({ name, status: 'PASS' });
        } catch (e) {
          results.push({ name, status: 'FAIL', message: `${e?.name}: ${e?.message}` });
        }
      }
      return results;
    },
  });
})();
