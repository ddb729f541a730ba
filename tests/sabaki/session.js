#!/usr/bin/env node
// A Sabaki session against a GTP engine, driven by Sabaki's own GTP library (@sabaki/gtp):
// the start-up queries Sabaki sends, the board synced through ControllerStateTracker, an
// analysis stream read line by line and interrupted the way Sabaki does it (a command sent
// while the analysis runs), then genmove, undo, showboard and quit.
//
// usage: node session.js ENGINE_PROGRAM [ENGINE_ARGS...]
// Prints one JSON object (what the engine answered) on stdout for the test to check.

const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

const SIZE = 9
const KOMI = 6.5
const HISTORY = [
  ['B', 'E5'], ['W', 'C3'], ['B', 'G3'], ['W', 'C6']
].map(args => ({name: 'play', args}))
const ANALYSIS_LINES = 3 // info lines to read before interrupting
const DEADLINE_MS = 120000

// One `info` line of lz-analyze / kata-analyze: candidate moves (key/value pairs up to `pv`,
// then the variation) and, for kata-analyze, a trailing `ownership` list.
function parseInfoLine(line) {
  const words = line.trim().split(/\s+/)
  const moves = []
  let ownership = null
  let current = null
  let i = 0
  while (i < words.length) {
    const word = words[i]
    if (word === 'info') {
      current = {}
      moves.push(current)
      i += 1
    } else if (word === 'ownership') {
      ownership = words.slice(i + 1)
      break
    } else if (word === 'pv') {
      let j = i + 1
      while (j < words.length && !['info', 'ownership'].includes(words[j])) j += 1
      current.pv = words.slice(i + 1, j)
      i = j
    } else {
      if (current == null) throw new Error(`key outside an info segment: ${line}`)
      current[word] = words[i + 1]
      i += 2
    }
  }
  return {moves, ownership}
}

// Run an analysis command; after `lines` info lines send protocol_version (Sabaki's
// EngineSyncer.sendAbort) and return what was read plus the interrupting answer.
async function analyse(controller, command) {
  const infos = []
  let interrupt = null
  const response = await controller.sendCommand(command, ({line}) => {
    if (!line.startsWith('info ')) return
    infos.push({line, atMs: Date.now()})
    if (infos.length === ANALYSIS_LINES) {
      interrupt = controller.sendCommand({name: 'protocol_version'})
    }
  })
  return {
    error: !!response.error,
    lines: infos.length,
    parsed: infos.map(({line}) => parseInfoLine(line)),
    intervalsMs: infos.slice(1).map((x, k) => x.atMs - infos[k].atMs),
    interrupt: interrupt == null ? null : await interrupt
  }
}

async function main() {
  const [program, ...args] = process.argv.slice(2)
  const controller = new Controller(program, args)
  const tracker = new ControllerStateTracker(controller)
  const stderr = []
  controller.on('stderr', ({content}) => stderr.push(content))
  controller.start()
  const exited = new Promise(resolve => controller.process.once('exit', code => resolve(code)))
  const out = {}

  // what Sabaki's EngineSyncer asks when an engine starts
  const [name, version, protocol, commands] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map(n =>
      controller.sendCommand({name: n})))
  out.name = name.content
  out.version = version.content
  out.protocol = protocol.content
  out.commands = commands.content.split('\n')

  await tracker.sync({komi: KOMI, boardsize: [SIZE, SIZE], history: HISTORY})
  out.synced = tracker.state
  out.komi = (await tracker.queueCommand({name: 'get_komi'})).content

  out.kata = await analyse(controller, {
    name: 'kata-analyze', args: ['B', '20', 'ownership', 'true']})
  out.lz = await analyse(controller, {name: 'lz-analyze', args: ['B', '20']})

  const board = await tracker.queueCommand({name: 'showboard'})
  const genmove = await tracker.queueCommand({name: 'genmove', args: ['B']})
  out.genmove = genmove.content
  out.historyAfterGenmove = tracker.state.history.length
  out.showboardAfterGenmove = (await tracker.queueCommand({name: 'showboard'})).content
  const undo = await tracker.queueCommand({name: 'undo'})
  out.undoError = !!undo.error
  out.historyAfterUndo = tracker.state.history.length
  out.showboardBefore = board.content
  out.showboardAfterUndo = (await tracker.queueCommand({name: 'showboard'})).content
  // a Sabaki re-sync to the same position after the undo sends nothing but succeeds
  await tracker.sync({komi: KOMI, boardsize: [SIZE, SIZE], history: HISTORY})
  out.badMove = await tracker.queueCommand({name: 'play', args: ['B', 'E5']})

  await controller.stop(10000)
  out.exitCode = await exited
  out.stderrLines = stderr.length
  console.log(JSON.stringify(out))
}

const timer = setTimeout(() => {
  console.error(`session did not finish within ${DEADLINE_MS} ms`)
  process.exit(2)
}, DEADLINE_MS)

main().then(() => clearTimeout(timer)).catch(err => {
  console.error(err)
  process.exit(1)
})
