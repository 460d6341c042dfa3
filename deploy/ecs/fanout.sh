#!/usr/bin/env bash
# Starts a fleet of headroom agents on ECS: one Fargate task per index of
# the task list, task i with HEADROOM_TASK_INDEX=i, started at a steady
# rate rather than all at once. The rate is what the shared budget admits
# in the fleet's first seconds (README.md beside this file); a fleet that
# starts in the same second sends its first calls in the same second, more
# than the 1 s and 10 s request windows hold: the shared budget queues
# them rather than let Azure refuse them, and the containers wait, paid.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: fanout.sh --count N --rate R [options]

Starts N tasks of the headroom task definition, with HEADROOM_TASK_INDEX
set to FIRST, FIRST+1, ... FIRST+N-1, at most R a second (R may be a
fraction: 0.5 starts one every two seconds).

  --cluster NAME           ECS cluster (env ECS_CLUSTER)
  --task-definition TD     family[:revision] or ARN (env ECS_TASK_DEFINITION;
                           default headroom)
  --subnets IDS            comma-separated subnet ids (env ECS_SUBNETS)
  --security-groups IDS    comma-separated security group ids
                           (env ECS_SECURITY_GROUPS)
  --count N                how many tasks (env FANOUT_COUNT)
  --rate R                 tasks started per second (env FANOUT_RATE)
  --first I                the first index (env FANOUT_FIRST; default 0),
                           to resume a fan-out that stopped part way
  --container NAME         the container to set the index in (default headroom)
  --capacity-provider CP   start on CP (such as FARGATE_SPOT) instead of
                           the FARGATE launch type
  --public-ip              give each task a public IP (subnets with no NAT)
  --dry-run                print the aws commands instead of running them
  -h, --help               this message

Exit status: 0 every task started; 1 some did not (their indexes are
printed); 2 bad usage.
EOF
}

die_usage() {
	printf 'fanout.sh: %s\n' "$1" >&2
	printf 'run fanout.sh --help for the options\n' >&2
	exit 2
}

cluster=${ECS_CLUSTER:-}
task_definition=${ECS_TASK_DEFINITION:-headroom}
subnets=${ECS_SUBNETS:-}
security_groups=${ECS_SECURITY_GROUPS:-}
count=${FANOUT_COUNT:-}
rate=${FANOUT_RATE:-}
first=${FANOUT_FIRST:-0}
container=headroom
capacity_provider=
public_ip=DISABLED
dry_run=false

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--dry-run) dry_run=true ;;
	--public-ip) public_ip=ENABLED ;;
	--cluster | --task-definition | --subnets | --security-groups | --count | --rate | --first | --container | --capacity-provider)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case $1 in
		--cluster) cluster=$2 ;;
		--task-definition) task_definition=$2 ;;
		--subnets) subnets=$2 ;;
		--security-groups) security_groups=$2 ;;
		--count) count=$2 ;;
		--rate) rate=$2 ;;
		--first) first=$2 ;;
		--container) container=$2 ;;
		--capacity-provider) capacity_provider=$2 ;;
		esac
		shift
		;;
	*) die_usage "unknown argument: $1" ;;
	esac
	shift
done

[ -n "$cluster" ] || die_usage "no cluster: give --cluster NAME or set ECS_CLUSTER"
[ -n "$task_definition" ] || die_usage "no task definition: give --task-definition TD"
[ -n "$subnets" ] || die_usage "no subnets: give --subnets subnet-a,subnet-b or set ECS_SUBNETS"
[ -n "$security_groups" ] || die_usage "no security groups: give --security-groups sg-a or set ECS_SECURITY_GROUPS"
if ! [[ $count =~ ^[0-9]+$ ]] || [ "$count" -eq 0 ]; then
	die_usage "--count ${count:-(none)}: want a whole number of tasks above 0"
fi
[[ $first =~ ^[0-9]+$ ]] || die_usage "--first $first: want a whole number, 0 or more"
if ! [[ $rate =~ ^([0-9]+([.][0-9]*)?|[.][0-9]+)$ ]] || ! LC_ALL=C awk -v r="$rate" 'BEGIN { exit !(r > 0) }'; then
	die_usage "--rate ${rate:-(none)}: want tasks per second above 0, such as 5 or 0.5"
fi
# Leading zeros are decimal here, not octal as bash arithmetic reads them.
count=$((10#$count)) first=$((10#$first))
[[ $container =~ ^[A-Za-z0-9_-]+$ ]] || die_usage "--container $container: want a container name (letters, digits, - and _)"

if ! $dry_run && ! command -v aws >/dev/null 2>&1; then
	printf 'fanout.sh: no aws on the PATH: install the AWS CLI, or use --dry-run to see the commands\n' >&2
	exit 2
fi

# now prints the time in seconds, with a fraction. bash 5 has it built in
# (in the locale's decimal point); date +%N works where bash is older.
now() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		printf '%s\n' "${EPOCHREALTIME/,/.}"
	else
		date +%s.%N
	fi
}

# quote prints its arguments as one shell command line, each quoted only
# where it needs to be, so a printed command can be pasted as it is.
quote() {
	local sep='' a
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
			printf '%s%s' "$sep" "$a"
		else
			printf "%s'%s'" "$sep" "${a//\'/\'\\\'\'}"
		fi
		sep=' '
	done
	printf '\n'
}

network="awsvpcConfiguration={subnets=[$subnets],securityGroups=[$security_groups],assignPublicIp=$public_ip}"
if [ -n "$capacity_provider" ]; then
	placement=(--capacity-provider-strategy "capacityProvider=$capacity_provider,weight=1")
else
	placement=(--launch-type FARGATE)
fi

# Task i starts at start + (i - first) / rate, whatever the time each
# run-task call took: the schedule does not drift, and a slow call is
# followed by a shorter sleep.
start=$(now)
failed=()
for ((n = 0; n < count; n++)); do
	index=$((first + n))
	delay=$(LC_ALL=C awk -v s="$start" -v n="$n" -v r="$rate" -v t="$(now)" 'BEGIN { d = s + n / r - t; printf "%.3f\n", (d > 0 ? d : 0) }')
	if [ "$delay" != 0.000 ]; then
		sleep "$delay"
	fi
	overrides="{\"containerOverrides\":[{\"name\":\"$container\",\"environment\":[{\"name\":\"HEADROOM_TASK_INDEX\",\"value\":\"$index\"}]}]}"
	cmd=(aws ecs run-task
		--cluster "$cluster"
		--task-definition "$task_definition"
		"${placement[@]}"
		--network-configuration "$network"
		--overrides "$overrides"
		--started-by headroom-fanout
		--count 1
		--query '[tasks[0].taskArn, failures[0].reason]'
		--output text)
	if $dry_run; then
		quote "${cmd[@]}"
		continue
	fi
	# run-task reports a task it could not place (no capacity, no ENI)
	# in its answer's failures, not in its exit status.
	if out=$("${cmd[@]}"); then
		arn=${out%%[[:space:]]*}
		reason=${out#"$arn"}
		reason=${reason#[[:space:]]}
	else
		arn=None reason="aws exited $?"
	fi
	if [ -z "$arn" ] || [ "$arn" = None ]; then
		printf 'fanout.sh: index %d: not started: %s\n' "$index" "${reason:-no task in the answer}" >&2
		failed+=("$index")
	else
		printf 'index %d: %s\n' "$index" "$arn" >&2
	fi
done

if [ ${#failed[@]} -gt 0 ]; then
	printf 'fanout.sh: %d of %d tasks did not start: indexes %s\n' "${#failed[@]}" "$count" "${failed[*]}" >&2
	exit 1
fi
