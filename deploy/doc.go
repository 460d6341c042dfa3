// Package deploy holds the manifests that run a fleet of headroom agents:
// kubernetes/ (an indexed Job, its ConfigMaps and Secret, a Redis to try
// it with) and ecs/ (a Fargate task definition and the script that fans
// tasks out). It has no code. Its tests decode every manifest strictly
// into the engines' own API types (k8s.io/api, the AWS SDK's ECS types),
// so a misspelt field fails here rather than being dropped by a cluster,
// and check what the container contract needs of each.
package deploy
