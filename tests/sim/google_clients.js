#!/usr/bin/env node
// Google's own client libraries (REST transport, unmodified) against the cloud
// emulator: @google-cloud/container's ClusterManagerClient and
// @google-cloud/compute's clients, with an OAuth2 access token as a real
// program would have. Run by GoogleClientLibraries in google_clients_test.cc.
//   node tests/sim/google_clients.js SOURCE_DIR PORT
'use strict';
const path = require('path');
const assert = require('assert');

const [sourceDir, port] = process.argv.slice(2);
const nm = path.join(sourceDir, '.deps', 'npm', 'node_modules');
const container = require(path.join(nm, '@google-cloud/container'));
const compute = require(path.join(nm, '@google-cloud/compute'));
const {OAuth2Client} = require(path.join(nm, 'google-auth-library'));

const auth = new OAuth2Client();
auth.setCredentials({access_token: 'fake-token', expiry_date: Date.now() + 3600 * 1000});
const opts = {fallback: true, protocol: 'http', apiEndpoint: '127.0.0.1', port: Number(port), authClient: auth};

async function gke() {
  const c = new container.v1.ClusterManagerClient(opts);
  const parent = 'projects/gp/locations/us-central1-a/clusters/gc';
  let [op] = await c.createNodePool({
    parent,
    nodePool: {name: 'tpu', initialNodeCount: 4, config: {machineType: 'ct6e-standard-4t', labels: {a: '1'}},
               placementPolicy: {type: 'COMPACT', tpuTopology: '4x4'}},
  });
  assert.strictEqual(op.operationType, 'CREATE_NODE_POOL');
  const opName = `projects/gp/locations/us-central1-a/operations/${op.name}`;
  for (let i = 0; i < 2000 && op.status !== 'DONE'; i++) [op] = await c.getOperation({name: opName});
  assert.strictEqual(op.status, 'DONE');
  const [pool] = await c.getNodePool({name: `${parent}/nodePools/tpu`});
  assert.strictEqual(pool.status, 'RUNNING');
  assert.strictEqual(pool.config.diskType, 'pd-balanced');
  assert.strictEqual(pool.placementPolicy.type, 'COMPACT');
  const [list] = await c.listClusters({parent: 'projects/gp/locations/-'});
  assert.strictEqual(list.clusters[0].nodePools[0].name, 'tpu');
  [op] = await c.updateNodePool({name: `${parent}/nodePools/tpu`, labels: {labels: {b: '2'}}});
  for (let i = 0; i < 2000 && op.status !== 'DONE'; i++) [op] = await c.getOperation({name: opName.replace(/operation-.*/, op.name)});
  const [after] = await c.getNodePool({name: `${parent}/nodePools/tpu`});
  assert.deepStrictEqual(after.config.labels, {b: '2'});
  await assert.rejects(c.setNodePoolSize({name: `${parent}/nodePools/tpu`, nodeCount: 8}), /multi-host/);
  // The auth client's fetch turns the error body into the exception's message.
  await assert.rejects(c.getNodePool({name: `${parent}/nodePools/none`}), /Not found: projects\/gp/);
  const [ops] = await c.listOperations({parent: 'projects/gp/locations/-'});
  assert.ok(ops.operations.length >= 2);
  console.log('container client: ok');
}

// Built before any call: loading them takes seconds.
const policies = new compute.ResourcePoliciesClient(opts);
const templates = new compute.InstanceTemplatesClient(opts);
const migs = new compute.InstanceGroupManagersClient(opts);

const zoneOps = new compute.ZoneOperationsClient(opts);
const regionOps = new compute.RegionOperationsClient(opts);
const globalOps = new compute.GlobalOperationsClient(opts);

// Waits through the scope's operations.wait, as the extended-operation helper does.
async function done(result) {
  const op = result.latestResponse || result;
  let r;
  if (op.zone) [r] = await zoneOps.wait({project: 'gp', zone: op.zone.split('/').pop(), operation: op.name});
  else if (op.region) [r] = await regionOps.wait({project: 'gp', region: op.region.split('/').pop(), operation: op.name});
  else [r] = await globalOps.wait({project: 'gp', operation: op.name});
  assert.strictEqual(r.status, 'DONE');
  assert.ok(!r.error, JSON.stringify(r.error));
}

async function gce() {
  let [op] = await policies.insert({project: 'gp', region: 'us-central1', resourcePolicyResource: {
    name: 'wp', workloadPolicy: {type: 'HIGH_THROUGHPUT', acceleratorTopology: '2x2x2'}}});
  await done(op);
  [op] = await templates.insert({project: 'gp', instanceTemplateResource: {
    name: 'tmpl', properties: {machineType: 'tpu7x-standard-4t', scheduling: {provisioningModel: 'RESERVATION_BOUND'}}}});
  await done(op);
  [op] = await migs.insert({project: 'gp', zone: 'us-central1-a', instanceGroupManagerResource: {
    name: 'mig', instanceTemplate: 'global/instanceTemplates/tmpl', targetSize: 2,
    targetSizePolicy: {mode: 'BULK'}}});
  await done(op);
  [op] = await migs.resize({project: 'gp', zone: 'us-central1-a', instanceGroupManager: 'mig', size: 4});
  await done(op);
  const [mig] = await migs.get({project: 'gp', zone: 'us-central1-a', instanceGroupManager: 'mig'});
  assert.strictEqual(mig.targetSize, 4);
  assert.strictEqual(mig.targetSizePolicy.mode, 'BULK');
  const seen = [];
  const sizes = {};
  for await (const [scope, list] of migs.aggregatedListAsync({project: 'gp', maxResults: 1}))
    for (const m of list.instanceGroupManagers || []) {
      seen.push(`${scope}/${m.name}`);
      sizes[m.name] = m.targetSize;
    }
  // Ours, and the one GKE runs behind node pool "tpu" (4 nodes), named by its instanceGroupUrls.
  const [pool] = await new container.v1.ClusterManagerClient(opts).getNodePool(
      {name: 'projects/gp/locations/us-central1-a/clusters/gc/nodePools/tpu'});
  const gkeGroup = pool.instanceGroupUrls[0].split('/').pop();
  assert.deepStrictEqual(seen.sort(), [`zones/us-central1-a/${gkeGroup}`, 'zones/us-central1-a/mig'].sort());
  assert.strictEqual(sizes[gkeGroup], pool.initialNodeCount);
  const [wp] = await policies.get({project: 'gp', region: 'us-central1', resourcePolicy: 'wp'});
  assert.strictEqual(wp.workloadPolicy.acceleratorTopology, '2x2x2');
  await assert.rejects(templates.get({project: 'gp', instanceTemplate: 'none'}), /was not found/);
  [op] = await migs.delete({project: 'gp', zone: 'us-central1-a', instanceGroupManager: 'mig'});
  await done(op);
  console.log('compute clients: ok');
}

(async () => {
  await gke();
  await gce();
})().catch(e => {
  console.error('FAIL', e && e.stack || e);
  process.exit(1);
});
