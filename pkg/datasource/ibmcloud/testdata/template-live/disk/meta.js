{"user-data": "#!/bin/sh\necho hi mom\n"}
