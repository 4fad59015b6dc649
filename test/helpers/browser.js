'use strict';
// The Node-RED editor in a real browser, for test/browser.test.js: a page of Chromium (playwright-core)
// on the project's own Node-RED (scripts/start.js through StartedNodeRed), with what a user does there:
// drag a node from the palette, open its edit dialog, type into fields, click Done, deploy. It records
// the browser console's errors, uncaught page errors, every HTTP response body and every /comms frame the
// page receives, so a test can say "no console errors" and "this text never reached the browser".
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { StartedNodeRed, freePort } = require('./started-node-red');

/**
 * Starts scripts/start.js on a free port with a temporary KALEYRA_DATA_DIR. start.js deploys the demo flow
 * only when the user directory has no flows.json yet, so writing `flows` there first gives a Node-RED
 * with that flow instead ([] for an empty one).
 */
async function startNodeRed({ flows } = {}) {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kaleyra-browser-'));
  if (flows) fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows));
  const nr = new StartedNodeRed({ port: await freePort(), userDir });
  try {
    await nr.start();
  } catch (err) {
    nr.kill();
    throw err;
  }
  return nr;
}

/**
 * Installed in the page before the editor loads: window.__kaleyraEditDepth() is the number of open edit
 * dialogs. Node-RED 4 and later tell it (RED.editor.getEditStack()); 3.x keeps its edit stack private. There
 * it is read from the page: the editor shows a single tray at a time (opening a config node's dialog from a
 * node's dialog detaches the node's tray until it closes), and each tray's title is a breadcrumb trail with
 * one entry per open dialog. A tray sliding out has left the stack already but is still in the page for
 * 250 ms, so the 3.x count lags behind the stack by that much.
 */
const EDIT_DEPTH = `window.__kaleyraEditDepth = function () {
  if (RED.editor.getEditStack) return RED.editor.getEditStack().length;
  var top = $('#red-ui-editor-stack > .red-ui-tray').last();
  if (!top.length) return 0;
  return Math.max(1, top.find('.red-ui-tray-breadcrumbs > li').length);
};`;

class EditorPage {
  constructor(page, url) {
    this.page = page;
    page.setDefaultTimeout(15000);
    this.url = url;
    /** console.error lines and uncaught exceptions, as text. */
    this.errors = [];
    /** { url, status, body } of every response the page received (bodies read asynchronously). */
    this.responses = [];
    /** Text of every websocket frame the page received. */
    this.frames = [];
    this.pending = new Set();
    page.on('console', (m) => {
      if (m.type() === 'error') this.errors.push(`console.error: ${m.text()}`);
    });
    page.on('pageerror', (err) => this.errors.push(`page error: ${err.message}`));
    page.on('response', (res) => {
      const read = res
        .body()
        .then((body) => this.responses.push({ url: res.url(), status: res.status(), body: body.toString('utf8') }))
        .catch(() => this.responses.push({ url: res.url(), status: res.status(), body: '' })) // redirects have none
        .finally(() => this.pending.delete(read));
      this.pending.add(read);
    });
    page.on('websocket', (ws) => ws.on('framereceived', (f) => this.frames.push(String(f.payload))));
  }

  /** Resolves once every response body seen so far has been read. */
  async settle() {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Loads the editor and waits until the palette holds `type` and a flow tab is active. */
  async open(type) {
    if (!this.scriptAdded) {
      await this.page.addInitScript(EDIT_DEPTH);
      this.scriptAdded = true;
    }
    await this.page.goto(`${this.url}/`);
    await this.page.waitForFunction(
      (t) => window.RED && RED.nodes && RED.nodes.getType(t) && RED.workspaces && RED.workspaces.active() && document.querySelector(`.red-ui-palette-node[data-palette-type="${t}"]`),
      type,
      { timeout: 60000 },
    );
  }

  evaluate(fn, arg) {
    return this.page.evaluate(fn, arg);
  }

  /** Ids of the nodes of a type, in the order they were added. */
  nodeIds(type) {
    return this.evaluate((t) => RED.nodes.filterNodes({ type: t }).map((n) => n.id), type);
  }

  /** The node's properties as the editor holds them (without its definition and private fields). */
  node(id) {
    return this.evaluate((i) => {
      const n = RED.nodes.node(i);
      return n && Object.fromEntries(Object.entries(n).filter(([k, v]) => !k.startsWith('_') && typeof v !== 'function' && typeof v !== 'object'));
    }, id);
  }

  /**
   * Drags a node from the palette onto the workspace with the mouse (jQuery UI draggable sees real
   * mousedown, mousemoves and mouseup) and resolves the id of the node that appeared.
   */
  async dragFromPalette(type, x, y) {
    const before = await this.nodeIds(type);
    // As a user would: filter the palette by the type's name first, then drag the entry that is left.
    const search = this.page.locator('#red-ui-palette-search input');
    await search.fill(type);
    await search.press('End');
    const item = this.page.locator(`#red-ui-palette-container .red-ui-palette-node[data-palette-type="${type}"]`);
    const from = await this.stableBox(item); // the other categories fold away first
    const chart = await this.page.locator('#red-ui-workspace-chart').boundingBox();
    await this.page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await this.page.mouse.down();
    await this.page.mouse.move(from.x + from.width / 2 + 30, from.y + from.height / 2, { steps: 5 });
    await this.page.mouse.move(chart.x + x, chart.y + y, { steps: 15 });
    await this.page.mouse.up();
    await this.page.waitForFunction(([t, n]) => RED.nodes.filterNodes({ type: t }).length > n, [type, before.length]);
    const after = await this.nodeIds(type);
    return after.find((id) => !before.includes(id));
  }

  /** The element's bounding box once it is visible and has stopped moving. */
  async stableBox(locator) {
    await locator.waitFor({ state: 'visible' });
    let last = null;
    for (let i = 0; i < 100; i++) {
      const box = await locator.boundingBox();
      if (box && last && box.x === last.x && box.y === last.y && box.width === last.width && box.height === last.height) return box;
      last = box;
      await this.page.waitForTimeout(100);
    }
    throw new Error('the element kept moving');
  }

  /** The node's shape on the workspace. */
  shape(id) {
    return this.page.locator(`#red-ui-workspace-chart g.red-ui-flow-node-group[id="${id}"] rect.red-ui-flow-node`);
  }

  /** Drags a wire from the output port of one node to the input port of another. */
  async wire(fromId, toId) {
    const out = await this.page.locator(`g.red-ui-flow-node-group[id="${fromId}"] .red-ui-flow-port-output rect.red-ui-flow-port`).first().boundingBox();
    const into = await this.page.locator(`g.red-ui-flow-node-group[id="${toId}"] .red-ui-flow-port-input rect.red-ui-flow-port`).first().boundingBox();
    await this.page.mouse.move(out.x + out.width / 2, out.y + out.height / 2);
    await this.page.mouse.down();
    await this.page.mouse.move(into.x + into.width / 2, into.y + into.height / 2, { steps: 10 });
    await this.page.mouse.up();
  }

  /**
   * Opens a node's edit dialog by double-clicking it; resolves once its form is built. The clicks are paced
   * as a hand's are: the editor opens the dialog only when the two mousedowns are 1 to 650 ms apart
   * (clickElapsed > 0), and Playwright's undelayed double-click can put both in the same millisecond.
   */
  async openDialog(id) {
    await this.shape(id).dblclick({ delay: 40 });
    await this.waitForTray(1);
  }

  /** How many edit dialogs are open (the dialog of a config node opened from a node's dialog is the second). */
  depth() {
    return this.evaluate(() => window.__kaleyraEditDepth());
  }

  /**
   * Waits until `depth` edit dialogs are open and the top one has finished opening: its form built (the
   * footer holds its buttons) and slid in (the tray's `right` is 0 once its transition starts).
   */
  async waitForTray(depth) {
    await this.page.waitForFunction((d) => {
      if (window.__kaleyraEditDepth() !== d) return false;
      const top = $('#red-ui-editor-stack > .red-ui-tray').last();
      return top.find('.red-ui-tray-footer button').length > 0 && top[0].style.right === '0px' && !top.is(':animated');
    }, depth);
    await this.page.waitForTimeout(350); // the tray slides in (a 0.25 s transition)
  }

  /** Waits until `depth` edit dialogs are left open (after a Done or Cancel). */
  async waitForDepth(depth) {
    await this.page.waitForFunction((d) => window.__kaleyraEditDepth() === d, depth);
    await this.page.waitForTimeout(350); // the tray slides out, the one below slides back in
  }

  /**
   * Cancels every open edit dialog, top first: after a failed test, so that the next one starts from the
   * workspace. Best effort: it stops (without throwing) when a dialog does not close.
   */
  async closeAll() {
    try {
      for (let depth = await this.depth(); depth > 0; depth--) {
        const cancel = this.tray().locator('#node-config-dialog-cancel, #node-dialog-cancel').first();
        if (!(await cancel.count())) break;
        await cancel.click({ timeout: 5000 });
        await this.page.waitForFunction((d) => window.__kaleyraEditDepth() === d, depth - 1, { timeout: 5000 });
        await this.page.waitForTimeout(350);
      }
    } catch {
      // left as it is; the next test reports what it finds
    }
  }

  /**
   * Opens the dialog of a new config node for a node's config property: Node-RED 4's "+" button next to
   * the select, or, in 3.x (no such button), the select's "Add new ..." option and its pencil button.
   */
  async addConfigNode(property) {
    const add = this.page.locator(`#node-input-btn-${property}-add`);
    if ((await add.count()) > 0) await add.click();
    else {
      await this.page.locator(`#node-input-${property}`).selectOption('_ADD_');
      await this.page.locator(`#node-input-lookup-${property}`).click();
    }
  }

  /**
   * Opens the dialog of the config node selected for a node's config property: Node-RED 4's pencil button
   * (#node-input-btn-<property>-edit), in 3.x the pencil button #node-input-lookup-<property>.
   */
  async editConfigNode(property) {
    const edit = this.page.locator(`#node-input-btn-${property}-edit`);
    await this.page.locator((await edit.count()) > 0 ? `#node-input-btn-${property}-edit` : `#node-input-lookup-${property}`).click();
  }

  /**
   * The topmost open edit dialog. The editor detaches the trays below it from the page while it is open,
   * and a tray being closed stays in the page for its slide-out, so this is the last one in the stack.
   */
  tray() {
    return this.page.locator('#red-ui-editor-stack > .red-ui-tray').last();
  }

  /**
   * Types into a field as a user does (replacing what it held) and leaves it with Tab, so the editor's
   * change handlers, and with them its validation, run.
   */
  async type(selector, value) {
    await this.page.locator(selector).waitFor({ state: 'attached' });
    // A TypedInput hides its original input and shows one of its own right after it.
    const typed = await this.evaluate((sel) => $(sel).hasClass('red-ui-typedInput'), selector);
    const field = this.page.locator(typed ? `${selector} + .red-ui-typedInput-container input.red-ui-typedInput-input` : selector);
    await field.fill(String(value));
    await field.press('Tab');
  }

  /**
   * Sets a TypedInput's type by opening its type menu and picking the entry. The menu slides down (jQuery,
   * 100 ms) with its overflow hidden meanwhile: an entry clicked during the slide is focused, so scrolled
   * into view, on mousedown, and the mouseup lands on another entry (no choice made). A user sees the menu
   * open first; so does this, then it waits until the TypedInput has the type and the menu has closed.
   */
  async chooseType(prop, type) {
    await this.page.locator(`#node-input-${prop} + .red-ui-typedInput-container button.red-ui-typedInput-type-select`).click();
    await this.page.waitForFunction(() => {
      const menu = $('.red-ui-typedInput-options:visible');
      return menu.length === 1 && !menu.is(':animated');
    });
    await this.page.locator(`.red-ui-typedInput-options:visible a[value="${type}"]`).click();
    await this.page.waitForFunction(([p, t]) => $(`#node-input-${p}`).typedInput('type') === t && !$('.red-ui-typedInput-options:visible').length, [prop, type]);
  }

  /** Whether the editor marks the field invalid (input-error on it, or on its TypedInput container). */
  marked(selector) {
    return this.evaluate((sel) => {
      const el = $(sel);
      if (el.length !== 1) throw new Error(`no single field ${sel}`);
      return el.hasClass('input-error') || el.next('.red-ui-typedInput-container').hasClass('input-error');
    }, selector);
  }

  /** The editor's own verdict on a node: valid, and every property valid. */
  valid(id) {
    return this.evaluate((i) => {
      const n = RED.nodes.node(i);
      RED.editor.validateNode(n);
      return n.valid;
    }, id);
  }

  /** Clicks the top dialog's Done button and waits until it closed. */
  async done() {
    const depth = await this.depth();
    const config = await this.page.locator('#node-config-dialog-ok').isVisible();
    await this.page.locator(config ? '#node-config-dialog-ok' : '#node-dialog-ok').click();
    await this.waitForDepth(depth - 1);
  }

  /**
   * Shows a sidebar tab by its id ('help', 'debug', ...) by clicking it: in 3.x and 4.x the tab's link
   * button (#red-ui-tab-<id>-link-button); Node-RED 5's sidebar has a tab bar of buttons instead, where
   * clicking the tab shown already hides it, so it is clicked only when not selected.
   */
  async showSidebar(id) {
    const link = this.page.locator(`#red-ui-tab-${id}-link-button`);
    if ((await link.count()) > 0) await link.click();
    else {
      const button = this.page.locator(`.red-ui-sidebar-tab-bar button[data-tab-id="${id}"]`);
      if (!(await button.evaluate((b) => b.classList.contains('selected') && $(b).is(':visible')))) await button.click();
    }
  }

  /** Shows the help sidebar; resolves once its table of contents is there. */
  async showHelp() {
    await this.showSidebar('help');
    await this.page.locator('#red-ui-sidebar-help-show-toc').waitFor({ state: 'visible' });
  }

  /** Clicks Deploy and waits until the editor has nothing left to deploy. */
  async deploy() {
    await this.page.locator('#red-ui-header-button-deploy').click();
    await this.page.waitForFunction(() => !RED.nodes.dirty() && !$('#red-ui-header-button-deploy').hasClass('deploying'), null, { timeout: 30000 });
  }
}

module.exports = { startNodeRed, EditorPage };
