/**
 * The kubelet's and the API server's limits on a pod's resolver config (pkg/apis/core/validation
 * MaxDNSNameservers, MaxDNSSearchPathsExpanded, MaxDNSSearchListCharsExpanded; ExpandedDNSConfig
 * is GA), shared by admission (src/shared/manifest/pod-validation-naming.ts), the node file check
 * (src/main/dns/node-dns-files.ts) and DNS forming (workers/kuberuntime/pod-dns.ts).
 */
export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
/** utilvalidation.DNS1123SubdomainMaxLength: glibc aborts on longer search paths. */
export const MAX_DNS_SEARCH_PATH_CHARS = 253;
