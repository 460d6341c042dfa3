package agent

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// maxTaskList bounds what LoadTaskList reads: a fleet's list of tasks.
const maxTaskList = 16 << 20

// A task list is one file for a whole fleet: every container reads it and
// runs the task at its own index (a Kubernetes indexed Job's
// JOB_COMPLETION_INDEX, say), so one manifest serves every agent.
//
//	tasks:
//	  - file: shop-sofa.yaml        # a task file, relative to this list
//	  - file: pay-invoice.yaml      # with values for its parameters:
//	    params: {invoice: INV-1043} # named pay-invoice-INV-1043
//	  - name: oak-desk              # or a task written out in place
//	    start_url: https://shop.example/
//	    goal: Put the oak desk in the cart.
type taskList struct {
	Tasks []listEntry `yaml:"tasks"`
}

type listEntry struct {
	Task `yaml:",inline"`
	Path string `yaml:"file"`
}

// TaskAt reads the task list at path and returns its task at index i:
// the one a fleet's container runs, by its job's index. An index past the
// list says how many tasks it holds.
func TaskAt(path string, i int) (*Task, error) {
	if i < 0 {
		return nil, fmt.Errorf("%d is not an index: want 0, 1, 2 …", i)
	}
	tasks, err := LoadTaskList(path)
	if err != nil {
		return nil, err
	}
	if i >= len(tasks) {
		return nil, fmt.Errorf("%s holds %s, indexes 0 to %d: is the fleet larger than its task list?", path, plural.Of(len(tasks), "task"), len(tasks)-1)
	}
	return tasks[i], nil
}

// LoadTaskList reads and checks a task list. Every problem is reported as
// file:line: field: what is wrong, in the list or in a task file it names.
func LoadTaskList(path string) ([]*Task, error) {
	data, err := yamlconf.ReadFile(path, maxTaskList)
	if err != nil {
		return nil, err
	}
	return ParseTaskList(path, data)
}

// ParseTaskList decodes and checks a task list held in memory; file names
// it in messages and is where the paths in it start from.
func ParseTaskList(file string, data []byte) ([]*Task, error) {
	var l taskList
	doc, err := yamlconf.Decode(file, data, &l)
	if err != nil {
		return nil, nameField(err)
	}
	if len(l.Tasks) == 0 {
		return nil, doc.Errorf("tasks", "a task list needs tasks: a list of task files (- file: NAME.yaml) or tasks written out")
	}
	dir := filepath.Dir(file)
	out := make([]*Task, len(l.Tasks))
	seen := map[string]int{}
	for i := range l.Tasks {
		e := &l.Tasks[i]
		at := fmt.Sprintf("tasks[%d]", i)
		var t *Task
		if e.Path != "" {
			rest := e.Task
			rest.Params = nil // the values for the file's parameters
			if !reflect.DeepEqual(rest, Task{}) {
				return nil, doc.Errorf(at, "an entry is a task file or a task written out, not both: move the fields into %s or drop file (params: may go with file:, the values for its parameters)", e.Path)
			}
			t, err = LoadTask(resolve(dir, e.Path))
			if err != nil {
				return nil, doc.Errorf(at+".file", "%v", err)
			}
			if e.Params != nil {
				if t, err = entryValues(doc.Sub(at), t, e.Params); err != nil {
					return nil, err
				}
			}
		} else {
			if doc.Has(at + ".file") {
				return nil, doc.Errorf(at+".file", "file names a task file: give its path")
			}
			t = &e.Task
			if err := t.check(doc.Sub(at)); err != nil {
				return nil, err
			}
			t.File = file
			t.Replay = resolve(dir, t.Replay)
			t.Cassette = resolve(dir, t.Cassette)
		}
		// Results, reports and sessions are told apart by name. Entries of
		// one file that give values are named for them, and two whose
		// values make the same name apart by their place in the list.
		if _, dup := seen[t.Name]; dup && t.fixed != nil {
			t.Name = fmt.Sprintf("%s-%d", t.Name, i)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, doc.Errorf(at, "task %q is also tasks[%d]: each task of a list has a name of its own", t.Name, j)
		}
		seen[t.Name] = i
		out[i] = t
	}
	return out, nil
}

// entryValues is the task of a list entry that gives values for the
// parameters of its file's task: each one declared, and a value fit to
// put in (written as the list writes it: 0042, not 34). They are put in
// when the task runs, with any others given then.
func entryValues(doc *yamlconf.Doc, t *Task, params map[string]*string) (*Task, error) {
	values := make(map[string]string, len(params))
	for _, name := range slices.Sorted(maps.Keys(params)) {
		field := "params." + name
		if _, ok := t.Params[name]; !ok {
			if !paramName.MatchString(name) {
				field = "params"
			}
			return nil, doc.Errorf(field, "unknown parameter %s: %s (%s)", yamlconf.Quote(name), declares(t), t.File)
		}
		v := params[name]
		if v == nil {
			return nil, doc.Errorf(field, "no value: give one (%s: VALUE), or leave %s out for the task's default", name, name)
		}
		if text, ok := doc.AsWritten(field); ok {
			*v = text
		}
		if err := checkParamValue(*v); err != nil {
			return nil, doc.Errorf(field, "%v", err)
		}
		values[name] = *v
	}
	return t.withValues(listName(t.Name, values), values), nil
}
