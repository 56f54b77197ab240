/**
 * The chain records every environment serves on `GET /chains` conform to the ChainRecord schema of
 * openapi/intents.yaml: the config files feed the API directly, so a config mistake is an API bug.
 */
import { listEnvironments, loadRegistry, silentLogger } from '@pontis/core'
import { loadOpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import { INTENTS_DOCUMENT_PATH } from '@pontis/intents'
import t from 'tap'
import { dummyEnvironment } from '../helpers/dummy-environment.js'
import { REPO_CONFIG_DIR } from '../helpers/environments.js'

const { document } = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const checker = new ConformanceChecker(document)

for (const environment of await listEnvironments(REPO_CONFIG_DIR)) {
  t.test(`${environment}: chain records conform to the document`, async (t) => {
    const env = await dummyEnvironment(environment, ['chains', 'chains.hub'])
    const registry = await loadRegistry({
      configDir: REPO_CONFIG_DIR,
      environment,
      env,
      logger: silentLogger,
    })
    const chains = registry.publicChainRecords()
    t.ok(chains.length > 0, 'the environment lists chains')
    const { problems } = checker.check({
      method: 'GET',
      path: '/chains',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.parse(JSON.stringify({ chains })),
    })
    t.same(problems, [], 'no mismatches')
    await registry.close()
  })
}
