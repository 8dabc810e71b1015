// ReadOCF reads Avro container files with the Java reference implementation
// and prints, per file, "file <path> <codec>", then each record re-encoded
// to binary as hex, then "end <count>". Used by interop_test.go.
import java.io.ByteArrayOutputStream;
import java.io.File;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

public class ReadOCF {
  public static void main(String[] args) throws Exception {
    for (String path : args) {
      try (DataFileReader<Object> f = new DataFileReader<Object>(new File(path), new GenericDatumReader<Object>())) {
        System.out.println("file " + path + " " + f.getMetaString("avro.codec"));
        GenericDatumWriter<Object> w = new GenericDatumWriter<Object>(f.getSchema());
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().binaryEncoder(bos, null);
        long n = 0;
        while (f.hasNext()) {
          Object rec = f.next();
          bos.reset();
          w.write(rec, enc);
          enc.flush();
          StringBuilder sb = new StringBuilder();
          for (byte b : bos.toByteArray()) sb.append(String.format("%02x", b));
          System.out.println(sb);
          n++;
        }
        System.out.println("end " + n);
      }
    }
  }
}
