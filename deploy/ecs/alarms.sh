#!/usr/bin/env bash
# Puts the fleet's CloudWatch alarms: every alarm in cloudwatch-alarms.json
# beside this file, with aws cloudwatch put-metric-alarm --cli-input-json,
# its actions sent to the page or the ticket topic by severity. The file is
# a JSON array written one alarm an object, each object opening with a
# line "  {" and closing with "  }" or "  },": that is how this script
# splits it, with no jq or python (deploy/cloudwatch_test.go checks the
# file keeps that layout, and that what this script sends is the file).
set -euo pipefail

usage() {
	cat <<'EOF_USAGE'
usage: alarms.sh --page-topic ARN --ticket-topic ARN [options]

Creates or updates every alarm of cloudwatch-alarms.json, in the aws
CLI's region (AWS_REGION, or --region), their actions sent to the topics.

  --page-topic ARN     SNS topic of the alarms that page someone
                       (in place of arn:aws:sns:REGION:ACCOUNT:headroom-page)
  --ticket-topic ARN   SNS topic of the alarms that open a ticket
                       (in place of arn:aws:sns:REGION:ACCOUNT:headroom-ticket)
  --file FILE          the alarms (default: cloudwatch-alarms.json beside
                       this script)
  --region REGION      passed to aws (default: the CLI's own)
  --dry-run            print the aws commands instead of running them
  -h, --help           this message

Exit status: 0 every alarm was put; 1 some were not (their names are
printed); 2 bad usage.
EOF_USAGE
}

die_usage() {
	printf 'alarms.sh: %s\n' "$1" >&2
	printf 'run alarms.sh --help for the options\n' >&2
	exit 2
}

page_placeholder='arn:aws:sns:REGION:ACCOUNT:headroom-page'
ticket_placeholder='arn:aws:sns:REGION:ACCOUNT:headroom-ticket'

self=${BASH_SOURCE[0]}
if [[ $self == */* ]]; then
	here=${self%/*}
else
	here=.
fi
file=$here/cloudwatch-alarms.json
page_topic=
ticket_topic=
region=
dry_run=false

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--dry-run) dry_run=true ;;
	--page-topic | --ticket-topic | --file | --region)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case $1 in
		--page-topic) page_topic=$2 ;;
		--ticket-topic) ticket_topic=$2 ;;
		--file) file=$2 ;;
		--region) region=$2 ;;
		esac
		shift
		;;
	*) die_usage "unknown argument: $1" ;;
	esac
	shift
done

# A topic goes into JSON as it is: an ARN's characters need no escaping,
# and anything else is refused rather than quoted.
topic_re='^arn:aws(-[a-z]+)*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$'
[ -n "$page_topic" ] || die_usage "no page topic: give --page-topic arn:aws:sns:REGION:ACCOUNT:NAME"
[ -n "$ticket_topic" ] || die_usage "no ticket topic: give --ticket-topic arn:aws:sns:REGION:ACCOUNT:NAME"
[[ $page_topic =~ $topic_re ]] || die_usage "--page-topic $page_topic: want an SNS topic ARN, arn:aws:sns:REGION:ACCOUNT:NAME"
[[ $ticket_topic =~ $topic_re ]] || die_usage "--ticket-topic $ticket_topic: want an SNS topic ARN, arn:aws:sns:REGION:ACCOUNT:NAME"
if [ -n "$region" ] && ! [[ $region =~ ^[a-z]{2}(-[a-z]+)+-[0-9]+$ ]]; then
	die_usage "--region $region: want a region name, such as us-east-1"
fi
[ -r "$file" ] || die_usage "cannot read $file"

if ! $dry_run && ! command -v aws >/dev/null 2>&1; then
	printf 'alarms.sh: no aws on the PATH: install the AWS CLI, or use --dry-run to see the commands\n' >&2
	exit 2
fi

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

# Split the array into its alarms, each joined into one line: a JSON
# string holds no line break, so a line's leading white space is never
# inside one and can go.
alarms=()
alarm= in=false n=0
while IFS= read -r line || [ -n "$line" ]; do
	n=$((n + 1))
	case $line in
	'  {')
		$in && die_usage "$file:$n: an alarm opens inside another"
		in=true alarm='{'
		;;
	'  }' | '  },')
		$in || die_usage "$file:$n: an alarm closes that did not open"
		in=false
		alarms+=("$alarm}")
		;;
	*)
		if $in; then
			alarm+=${line#"${line%%[![:space:]]*}"}
		elif [[ ! $line =~ ^[][[:space:]]*$ ]]; then
			die_usage "$file:$n: outside an alarm: want the layout \"  {\" ... \"  }\", one alarm an object"
		fi
		;;
	esac
done <"$file"
$in && die_usage "$file: the last alarm does not close"
[ ${#alarms[@]} -gt 0 ] || die_usage "$file: no alarms"

failed=()
for alarm in "${alarms[@]}"; do
	alarm=${alarm//"$page_placeholder"/"$page_topic"}
	alarm=${alarm//"$ticket_placeholder"/"$ticket_topic"}
	name=${alarm#*\"AlarmName\": \"}
	name=${name%%\"*}
	if [[ $alarm == *arn:aws:sns:REGION:ACCOUNT:* ]]; then
		printf 'alarms.sh: %s: an action is a placeholder neither topic replaces\n' "$name" >&2
		exit 2
	fi
	cmd=(aws)
	if [ -n "$region" ]; then
		cmd+=(--region "$region")
	fi
	cmd+=(cloudwatch put-metric-alarm --cli-input-json "$alarm")
	if $dry_run; then
		quote "${cmd[@]}"
		continue
	fi
	if "${cmd[@]}"; then
		printf 'put %s\n' "$name" >&2
	else
		printf 'alarms.sh: %s: aws exited %d\n' "$name" "$?" >&2
		failed+=("$name")
	fi
done

if [ ${#failed[@]} -gt 0 ]; then
	printf 'alarms.sh: %d of %d alarms were not put: %s\n' "${#failed[@]}" "${#alarms[@]}" "${failed[*]}" >&2
	exit 1
fi
