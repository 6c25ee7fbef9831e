/* SPDX-License-Identifier: MIT */
/*
 * Kubernetes manifests of one clone node: a ConfigMap with its children's
 * addresses (service DNS names, <child>.<namespace>.svc.cluster.local:<port>;
 * a kept node's own address), a Deployment and a Service, in one file of
 * three documents. Object names are the node's DNS-1035 label.
 *
 * Replicas: 1. A modelled service is one process tree behind its ports,
 * and its clone forks the model's processes itself (pre-forked workers
 * and all), so one pod is one instance of the service; replicas from the
 * process count would run that many times the processes. The count is
 * kept as an annotation; scale the Deployment to model more instances.
 * CPU request: the measured CPU time (cpu_millicores), when there is one.
 * The clone listens on DITTO_LISTEN_ADDRESS (0.0.0.0 here), not loopback:
 * a Service sends to the pod's address.
 */
#include <stdio.h>
#include <string.h>

#include "deploy_int.h"

static int metadata(const struct manifest_node *n, const struct deploy_params *p, const char *name,
		    struct dbuf *b)
{
	int err;

	dbuf_puts(b, "metadata:\n  name: ");
	if ((err = yaml_str(b, "a Kubernetes name", name)))
		return err;
	dbuf_puts(b, "\n  namespace: ");
	if ((err = yaml_str(b, "a namespace", p->k8s_namespace)))
		return err;
	dbuf_puts(b, "\n  labels:\n    app.kubernetes.io/name: ");
	if ((err = yaml_str(b, "a label", n->dns)))
		return err;
	dbuf_puts(b, "\n    app.kubernetes.io/part-of: \"ditto-clone\"\n"
		  "    app.kubernetes.io/managed-by: \"libditto\"\n"
		  "  annotations:\n    ditto-node: ");
	if ((err = yaml_str(b, "a node name", n->name)))
		return err;
	dbuf_putc(b, '\n');
	return 0;
}

static bool is_loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strncmp(addr, "localhost:", 10) ||
	       !strncmp(addr, "[::1]:", 6);
}

static int config_map(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		      struct dbuf *b)
{
	const struct manifest_node *n = &g->nodes[i];
	char name[MANIFEST_DNS_LABEL + 16], addr[2 * MANIFEST_MAX_ADDRESS];
	int err;

	snprintf(name, sizeof(name), "%s-upstreams", n->dns);
	dbuf_puts(b, "apiVersion: \"v1\"\nkind: \"ConfigMap\"\n");
	if ((err = metadata(n, p, name, b)))
		return err;
	dbuf_puts(b, n->n_upstreams ? "data:\n" : "data: {}\n");
	for (size_t j = 0; j < n->n_upstreams; j++) {
		const struct manifest_node *c = &g->nodes[n->upstreams[j]];

		if (c->kept)
			snprintf(addr, sizeof(addr), "%s", c->address);
		else
			snprintf(addr, sizeof(addr), "%s.%s.svc.cluster.local:%u", c->dns,
				 p->k8s_namespace, c->port);
		/* Right on one host, wrong in a pod: there it is the pod. */
		if (c->kept && is_loopback(c->address))
			ditto_warn("deploy: kubernetes: kept node %s is at %s, a loopback address: in "
				   "a pod that is the pod itself (point it at an address the cluster "
				   "reaches)", c->name, c->address);
		dbuf_puts(b, "  ");
		if ((err = yaml_str(b, "an environment name", c->env)))
			return err;
		dbuf_puts(b, ": ");
		if ((err = yaml_str(b, "an address", addr)))
			return err;
		dbuf_putc(b, '\n');
	}
	return 0;
}

static int container(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		     struct dbuf *b)
{
	const struct manifest_node *n = &g->nodes[i];
	char image[MANIFEST_MAX_ADDRESS + MANIFEST_DNS_LABEL + 16];
	int err;

	deploy_image(g, i, p, image, sizeof(image));
	dbuf_puts(b, "      containers:\n        - name: \"clone\"\n          image: ");
	if ((err = yaml_str(b, "an image name", image)))
		return err;
	/* Images are built where they run (no registry): never pulled. */
	dbuf_printf(b, "\n          imagePullPolicy: \"IfNotPresent\"\n"
		    "          args: [\"--port\", \"%u\"]\n"
		    "          env:\n"
		    "            - name: \"DITTO_LISTEN_ADDRESS\"\n"
		    "              value: \"0.0.0.0\"\n"
		    "          envFrom:\n"
		    "            - configMapRef:\n"
		    "                name: \"%s-upstreams\"\n"
		    "          ports:\n"
		    "            - name: \"serve\"\n"
		    "              containerPort: %u\n"
		    "              protocol: \"TCP\"\n"
		    "          readinessProbe:\n"
		    "            tcpSocket:\n"
		    "              port: %u\n"
		    "            periodSeconds: 2\n"
		    "          volumeMounts:\n"
		    "            - name: \"scratch\"\n"
		    "              mountPath: \"/tmp\"\n",
		    n->port, n->dns, n->port, n->port);
	if (n->cpu_millicores)
		dbuf_printf(b, "          resources:\n            requests:\n"
			    "              cpu: \"%llum\"\n", (unsigned long long)n->cpu_millicores);
	dbuf_puts(b, "      volumes:\n        - name: \"scratch\"\n          emptyDir: {}\n");
	return 0;
}

static int deployment(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		      struct dbuf *b)
{
	const struct manifest_node *n = &g->nodes[i];
	int err;

	dbuf_puts(b, "apiVersion: \"apps/v1\"\nkind: \"Deployment\"\n");
	if ((err = metadata(n, p, n->dns, b)))
		return err;
	dbuf_printf(b, "    ditto-processes: \"%llu\"\n    ditto-threads: \"%llu\"\n",
		    (unsigned long long)n->processes, (unsigned long long)n->threads);
	dbuf_printf(b, "spec:\n  replicas: 1\n  selector:\n    matchLabels:\n"
		    "      app.kubernetes.io/name: \"%s\"\n"
		    "  template:\n    metadata:\n      labels:\n"
		    "        app.kubernetes.io/name: \"%s\"\n"
		    "        app.kubernetes.io/part-of: \"ditto-clone\"\n"
		    "    spec:\n"
		    "      securityContext:\n        runAsNonRoot: true\n        runAsUser: 65534\n",
		    n->dns, n->dns);
	return container(g, i, p, b);
}

static int service(const struct manifest_node *n, const struct deploy_params *p, struct dbuf *b)
{
	int err;

	dbuf_puts(b, "apiVersion: \"v1\"\nkind: \"Service\"\n");
	if ((err = metadata(n, p, n->dns, b)))
		return err;
	dbuf_printf(b, "spec:\n  selector:\n    app.kubernetes.io/name: \"%s\"\n"
		    "  ports:\n    - name: \"serve\"\n      port: %u\n      targetPort: %u\n"
		    "      protocol: \"TCP\"\n", n->dns, n->port, n->port);
	return 0;
}

int deploy_k8s_node(const struct graph_manifest *g, size_t i, const struct deploy_params *p,
		    struct dbuf *b)
{
	int err;

	dbuf_printf(b, "# Generated by libditto %s: graph node %s.\n"
		    "# kubectl apply -f <this folder>/\n", ditto_version(), g->nodes[i].name);
	if ((err = config_map(g, i, p, b)))
		return err;
	dbuf_puts(b, "---\n");
	if ((err = deployment(g, i, p, b)))
		return err;
	dbuf_puts(b, "---\n");
	return service(&g->nodes[i], p, b);
}
