package redact

import "reflect"

// Copy returns a deep copy of v with Text applied to every string in it
// (and Bytes to every []byte, such as a json.RawMessage): a result or a
// record made fit to write, whatever fields it grows. Unexported fields
// are copied as they are; nesting past 64 levels is copied as it is.
func Copy[T any](v T) T {
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	clean(dst, src, 0)
	return dst.Interface().(T)
}

const maxDepth = 64

// clean sets dst, which is settable and of src's type, to src with its
// strings redacted.
func clean(dst, src reflect.Value, depth int) {
	if depth > maxDepth {
		dst.Set(src)
		return
	}
	switch src.Kind() {
	case reflect.String:
		dst.SetString(Text(src.String()))
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			if f := dst.Field(i); f.CanSet() {
				clean(f, src.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		if src.Type().Elem().Kind() == reflect.Uint8 {
			b := Bytes(src.Bytes())
			dst.Set(reflect.ValueOf(append([]byte(nil), b...)).Convert(src.Type()))
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			clean(s.Index(i), src.Index(i), depth+1)
		}
		dst.Set(s)
	case reflect.Array:
		for i := range src.Len() {
			clean(dst.Index(i), src.Index(i), depth+1)
		}
	case reflect.Map:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			k := reflect.New(src.Type().Key()).Elem()
			clean(k, it.Key(), depth+1)
			v := reflect.New(src.Type().Elem()).Elem()
			clean(v, it.Value(), depth+1)
			m.SetMapIndex(k, v)
		}
		dst.Set(m)
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		p := reflect.New(src.Type().Elem())
		clean(p.Elem(), src.Elem(), depth+1)
		dst.Set(p)
	case reflect.Interface:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		e := src.Elem()
		c := reflect.New(e.Type()).Elem()
		clean(c, e, depth+1)
		dst.Set(c)
	default:
		dst.Set(src)
	}
}
