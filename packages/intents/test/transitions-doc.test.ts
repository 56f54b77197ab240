/** The transition table documented in openapi/intents.yaml is the one the code enforces. */
import { loadOpenApiDocument } from '@pontis/http'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { type RequestStatus, TRANSITIONS } from '../src/lifecycle/state-machine.js'

t.test('StatusRecord.status documents exactly TRANSITIONS', async (t) => {
  const { document } = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
  const schemas = (
    document.components as {
      schemas: Record<string, { properties: Record<string, { description: string }> }>
    }
  ).schemas
  const description = schemas.StatusRecord!.properties.status!.description
  const documented = new Set<string>()
  for (const line of description.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    if (cells.length < 4 || cells[1] === 'From' || cells[1]?.startsWith('-')) continue
    for (const from of (cells[1] ?? '').split(',').map((name) => name.trim()))
      documented.add(`${from} -> ${cells[2]}`)
  }
  const enforced = new Set(
    (Object.entries(TRANSITIONS) as Array<[RequestStatus, readonly RequestStatus[]]>).flatMap(
      ([from, targets]) => targets.map((to) => `${from} -> ${to}`),
    ),
  )
  t.same([...documented].sort(), [...enforced].sort())
})
