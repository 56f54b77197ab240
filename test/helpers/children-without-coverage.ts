/**
 * Loaded into every test process (package.json `tap.node-arg`). tap collects coverage in the
 * processes a test starts as well, but children started through `tsx` report their files with tsx's
 * source maps, one statement per file; merged with the test process's own record, which one wins
 * varied from run to run (6 740 or 49 415 statements). Coverage counts the test processes only: the
 * test process's own recording has already started, and children inherit this switch.
 */
process.env._TAPJS_PROCESSINFO_COVERAGE_ = '0'
