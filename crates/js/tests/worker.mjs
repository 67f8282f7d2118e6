// The package in Cloudflare Workers (workerd, via miniflare in run.mjs): answers the
// checks for the tables a request names.
import * as deltalens from './workerd.js';
import { answers, behaviour } from './checks.mjs';

export default {
  async fetch(request) {
    const u = new URL(request.url);
    const base = u.searchParams.get('base');
    const tables = (u.searchParams.get('tables') || '').split(',').filter(Boolean);
    return Response.json({ answers: await answers(deltalens, base, tables), behaviour: await behaviour(deltalens, base, tables[0]) });
  },
};
