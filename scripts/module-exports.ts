/**
 * Every name a TypeScript module exports, types included, with the file that declares it: read
 * with the TypeScript checker, so `export *` chains and type-only exports are followed.
 */
import { basename } from 'node:path'
import ts from 'typescript'

/** Each name `entryFile` exports, mapped to the base name of the file that declares it. */
export function declaredExports(entryFile: string): Map<string, string> {
  const program = ts.createProgram([entryFile], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(entryFile)
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
  if (moduleSymbol === undefined) throw new Error(`cannot read the exports of ${entryFile}`)
  const declared = new Map<string, string>()
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const file = target.declarations?.[0]?.getSourceFile().fileName
    declared.set(symbol.name, file === undefined ? '?' : basename(file))
  }
  return declared
}
