/** The widget page for browser tests: bundled from installed packages, served on loopback. */
export { buildWidgetBundle, installedVersion, type WidgetBundle, widgetVersions } from './bundle.js'
export type { WidgetEvent, WidgetPageConfig } from './config.js'
export { serveWidgetPage, type WidgetPage } from './page.js'
